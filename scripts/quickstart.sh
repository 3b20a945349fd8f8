#!/usr/bin/env bash
# The newcomer's first command: installs everything (scripts/setup.sh), builds convgate, and runs
# the main job, convgate verify, on the bundled example: a small CNN and a converted copy of it
# (BatchNorm folded into the Conv, Gemm lowered to MatMul + Add), both generated from code at build
# time; then converts the CNN to float16 and verifies that.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
export ORT_DISABLE_TELEMETRY=1
cmake --preset default >/dev/null
cmake --build build --target convgate examples   # the tests are built by scripts/test.sh
./scripts/install_python.sh   # import convgate, in the venv (pip install . reusing build/)

echo
echo "== convgate verify build/examples/tinycnn.onnx --target build/examples/tinycnn_converted.onnx"
./build/src/cli/convgate verify build/examples/tinycnn.onnx \
  --target build/examples/tinycnn_converted.onnx --dim batch=2 --samples 4 --out build/quickstart
echo
echo "== convgate verify build/examples/tinycnn.onnx --to fp16 -o build/quickstart-fp16/tinycnn_fp16.onnx"
./build/src/cli/convgate verify build/examples/tinycnn.onnx --to fp16 --param keep_io_types=1 \
  --dim batch=2 --samples 4 \
  -o build/quickstart-fp16/tinycnn_fp16.onnx --out build/quickstart-fp16
echo
echo "verify_result.json:"
cat build/quickstart-fp16/verify_result.json
