#!/usr/bin/env bash
# Writes N small models and a batch manifest verifying each against its converted twin, for
# bench/batch.sh: copies of build/examples' tinycnn.onnx (models/mI.onnx) beside
# tinycnn_converted.onnx, and manifest.yaml with one `verify --target` entry per model.
#
# Usage: bench/make_batch_models.sh EXAMPLES_DIR OUT_DIR [N=50]
set -euo pipefail
EXAMPLES="$1"
OUT="$2"
N="${3:-50}"
mkdir -p "$OUT/models"
echo "models:" >"$OUT/manifest.yaml"
for i in $(seq 1 "$N"); do
  cp "$EXAMPLES/tinycnn.onnx" "$OUT/models/m$i.onnx"
  cp "$EXAMPLES/tinycnn_converted.onnx" "$OUT/models/m${i}_converted.onnx"
  printf '  - id: m%s\n    source: models/m%s.onnx\n    target: models/m%s_converted.onnx\n' \
    "$i" "$i" "$i" >>"$OUT/manifest.yaml"
done
