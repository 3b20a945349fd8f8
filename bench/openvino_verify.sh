#!/usr/bin/env bash
# `convgate verify MODEL.onnx --to openvino` (convert to IR, run the IR on OpenVINO and the source
# on ONNX Runtime, compare) against a Python script doing the same in one process
# (bench/openvino_verify.py, the venv's openvino and onnxruntime): whole processes, wall seconds,
# median of REPEATS, alternating the two. convgate's conversion cache is off (a fresh cache folder
# each run), so every run converts.
#
# Usage: bench/openvino_verify.sh
# Environment: BUILD_DIR (default build), REPEATS (default 5), MODELS (default: the bundled tinycnn
# and, when scripts/make_torch_fixtures.sh has made them, torchvision's resnet18 and mobilenet_v2).
#
# Prints one row per model: the median wall seconds of each, and convgate/python.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
REPEATS="${REPEATS:-5}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
PYTHON="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv/bin/python"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

if [ -z "${MODELS:-}" ]; then
  MODELS="$BUILD_DIR/examples/tinycnn.onnx:1x3x16x16"
  fixtures="$(ls -d "${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"/torchvision-* \
    2>/dev/null | head -n 1 || true)"
  for name in resnet18 mobilenet_v2; do
    if [ -n "$fixtures" ] && [ -f "$fixtures/$name.onnx" ]; then
      MODELS="$MODELS $fixtures/$name.onnx:1x3x224x224"
    fi
  done
fi

# shellcheck source=bench/timing.sh
source "$ROOT/bench/timing.sh"

printf '%-16s %10s %10s %8s\n' model python convgate ratio
for entry in $MODELS; do
  model="${entry%%:*}" shape="${entry##*:}"
  py=() cg=()
  for i in $(seq "$REPEATS"); do
    rm -rf "$OUT/py" "$OUT/cg" && mkdir -p "$OUT/py"
    py+=("$(wall "$PYTHON" "$ROOT/bench/openvino_verify.py" "$model" "$OUT/py" "$shape")")
    input="$("$CONVGATE" inspect "$model" --json | "$PYTHON" -c \
      'import json,sys; print(json.load(sys.stdin)["inputs"][0]["name"])')"
    cg+=("$(wall "$CONVGATE" verify "$model" --to openvino --shape "$input:$shape" \
      --cache-dir "$OUT/cg/cache" --out "$OUT/cg/result")")
  done
  p=$(printf '%s\n' "${py[@]}" | median)
  c=$(printf '%s\n' "${cg[@]}" | median)
  printf '%-16s %10.3f %10.3f %8.2f\n' "$(basename "$model" .onnx)" "$p" "$c" \
    "$(echo "$c / $p" | bc -l)"
done
