#!/usr/bin/env bash
# The newcomer's first command: installs everything (scripts/setup.sh), builds convgate, and runs
# the main job on the bundled example: a small CNN and a converted copy of it (BatchNorm folded
# into the Conv, Gemm lowered to MatMul + Add), both generated from code at build time.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
export ORT_DISABLE_TELEMETRY=1
cmake --preset default >/dev/null
cmake --build build --target convgate examples   # the tests are built by scripts/test.sh

echo
echo "== convgate compare build/examples/tinycnn.onnx build/examples/tinycnn_converted.onnx"
./build/src/cli/convgate compare build/examples/tinycnn.onnx build/examples/tinycnn_converted.onnx \
  --dim batch=2 --samples 4 --out build/quickstart
echo
echo "verify_result.json:"
cat build/quickstart/verify_result.json
