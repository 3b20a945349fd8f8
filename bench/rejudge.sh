#!/usr/bin/env bash
# `convgate check` against fresh `convgate compare` runs on real model pairs, and report.json's
# size per output check (bench/rejudge_bench.cc says what is counted and which policy grids).
#
# Usage: bench/rejudge.sh
# Environment: BUILD_DIR (default build), SAMPLES (default 4), SEED (default 7).
#
# The pairs: tinycnn against its 1% weight perturbation and its converted twin (build/examples),
# and when the torchvision fixtures can be made (scripts/make_torch_fixtures.sh): resnet18 and
# mobilenet_v2 as TorchScript against their ONNX export, ONNX against `convgate convert --to fp16`,
# and resnet18 against one Conv scaled by 1.01 (convgate-inject-fault). Each model runs once
# (`convgate run --save-outputs`); the bench then compares the saved outputs.
# Exit 1 when any re-judged verdict disagrees with the fresh one.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
SAMPLES="${SAMPLES:-4}"
SEED="${SEED:-7}"

if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target convgate examples convgate-inject-fault \
  convgate-rejudge-bench >/dev/null
CONVGATE="$BUILD_DIR/src/cli/convgate"
EXAMPLES="$BUILD_DIR/examples"
export ORT_DISABLE_TELEMETRY=1

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# Saves MODEL's outputs on the shared inputs as $OUT/NAME.npz.
outputs() {
  local name="$1" model="$2"
  shift 2
  "$CONVGATE" run "$model" --samples "$SAMPLES" --seed "$SEED" --save-outputs "$OUT/$name.npz" \
    "$@" >/dev/null
}

outputs tinycnn "$EXAMPLES/tinycnn.onnx"
outputs tinycnn_perturbed "$EXAMPLES/tinycnn_perturbed.onnx"
outputs tinycnn_converted "$EXAMPLES/tinycnn_converted.onnx"
PAIRS=("tinycnn-perturbed=$OUT/tinycnn.npz,$OUT/tinycnn_perturbed.npz"
  "tinycnn-converted=$OUT/tinycnn.npz,$OUT/tinycnn_converted.npz")

if FIXTURES="$("$ROOT/scripts/make_torch_fixtures.sh" 2>/dev/null | tail -n 1)"; then
  shape=(--shape input:1x3x224x224)
  for model in resnet18 mobilenet_v2; do
    "$CONVGATE" convert "$FIXTURES/$model.onnx" --to fp16 -o "$OUT/${model}_fp16.onnx" \
      --no-cache >/dev/null
    outputs "$model" "$FIXTURES/$model.onnx"
    outputs "${model}_pt" "$FIXTURES/$model.pt" "${shape[@]}"
    # TorchScript names no outputs (output_0): name them as the ONNX export does.
    /usr/bin/python3 -c '
import numpy as np, sys
z = dict(np.load(sys.argv[1]))
np.savez(sys.argv[1], **{k.replace("/output_0", "/output"): v for k, v in z.items()})
' "$OUT/${model}_pt.npz"
    outputs "${model}_fp16" "$OUT/${model}_fp16.onnx"
    PAIRS+=("$model-torch-vs-onnx=$OUT/${model}_pt.npz,$OUT/$model.npz"
      "$model-fp16=$OUT/$model.npz,$OUT/${model}_fp16.npz")
  done
  "$BUILD_DIR/convgate-inject-fault" "$FIXTURES/resnet18.onnx" "$OUT/resnet18_perturbed.onnx" \
    --fault perturb-conv >/dev/null
  outputs resnet18_perturbed "$OUT/resnet18_perturbed.onnx"
  PAIRS+=("resnet18-perturb-conv=$OUT/resnet18.npz,$OUT/resnet18_perturbed.npz")
else
  echo "torchvision fixtures unavailable: tinycnn pairs only" >&2
fi

"$BUILD_DIR/bench/convgate-rejudge-bench" "${PAIRS[@]}"
