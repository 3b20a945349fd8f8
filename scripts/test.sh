#!/usr/bin/env bash
# Builds (incrementally) and runs the whole test suite: unit, integration (the real binary) and
# conformance (the ONNX node test cases). Extra arguments go to ctest, e.g. -L unit.
set -euo pipefail
cd "$(dirname "$0")/.."

export ORT_DISABLE_TELEMETRY=1
cmake --preset default >/dev/null
cmake --build build
status=0
ctest --preset default "$@" || status=$?
# ctest shows a test's output only when it fails; the conformance counts matter either way.
log=build/Testing/Temporary/LastTest.log
if [ -f "$log" ] && grep -q "ONNX node conformance through" "$log"; then
  echo
  grep -A2 "ONNX node conformance through" "$log"
fi
exit "$status"
