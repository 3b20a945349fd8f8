#!/usr/bin/env bash
# Builds (incrementally) and runs the whole test suite: unit, integration (the real binary) and
# conformance (the ONNX node test cases). Extra arguments go to ctest, e.g. -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."

export ORT_DISABLE_TELEMETRY=1
cmake --preset default >/dev/null
cmake --build build
ctest --preset default "$@"
