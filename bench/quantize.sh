#!/usr/bin/env bash
# The quantization profile's floors, measured: for tinycnn and the torchvision fixtures
# (scripts/make_torch_fixtures.sh), `verify --to int8-dynamic` and `--to int8-static` (ONNX
# Runtime's quantization, static calibrated on the gate's inputs) and `--to openvino:int8` (NNCF's
# nncf.quantize, calibrated the same way), then the static model with one
# DequantizeLinear scale corrupted (convgate-inject-fault quant-scale, x4) compared under the same
# floors. Prints, per model and conversion, the worst output's cosine and SNR, the top-1 agreement
# of the classifier outputs, the verdict and the seconds taken.
#
# Usage: bench/quantize.sh [MODEL ...]   (default: tinycnn resnet18_bn_opset13 mobilenet_v2)
# Environment: BUILD_DIR (default build), SAMPLES (default 4).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
SAMPLES="${SAMPLES:-4}"
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(tinycnn resnet18_bn_opset13 mobilenet_v2)

cmake --build "$BUILD_DIR" --target convgate convgate-inject-fault examples >/dev/null
FIXTURES="$("$ROOT/scripts/make_torch_fixtures.sh" | tail -n 1)"
CONVGATE="$BUILD_DIR/src/cli/convgate"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export CONVGATE_CACHE_DIR="$WORK/cache"

summary() {  # report.json [comparison key] -> one line
  /usr/bin/python3 - "$@" <<'PYEOF'
import json, sys
report = json.load(open(sys.argv[1]))
comparison = report.get("comparison", report)
cosines, snrs = [], []
for result in comparison.get("results", []):
    metrics = result.get("stats", {}).get("metrics", {})
    if "cosine" in metrics:
        cosines.append(metrics["cosine"])
        snrs.append(metrics.get("snr_db", float("inf")))
top1 = [a["top1"]["rate"] for a in comparison.get("agreements", []) if a.get("top1")]
print("cosine %.5f  SNR %5.1f dB  top-1 %s  %s" % (
    min(cosines) if cosines else float("nan"), min(snrs) if snrs else float("nan"),
    ("%.3f" % min(top1)) if top1 else "-", comparison.get("verdict", report.get("verdict"))))
PYEOF
}

profile_flags() {  # the floors and agreement checks verify judged a conversion with, as flags
  /usr/bin/python3 - "$1" <<'PYEOF'
import json, sys
comparison = json.load(open(sys.argv[1]))["comparison"]
settings = comparison["policy"]["conversion_defaults"]["settings"]
flags = ["--mismatch-ppm", settings["mismatch_ppm"], "--min-cosine", settings["min_cosine"],
         "--min-snr-db", settings["min_snr_db"]]
for agreement in comparison.get("agreements", []):
    for check in agreement.get("checks", []):
        flags += ["--agreement", check["check"]]
print(" ".join(str(flag) for flag in flags))
PYEOF
}

model_path() {
  if [ "$1" = tinycnn ]; then echo "$BUILD_DIR/examples/tinycnn.onnx"; else echo "$FIXTURES/$1.onnx"; fi
}
dims() {
  if [ "$1" = tinycnn ]; then echo "--dim batch=8"; else echo ""; fi
}

printf "%-22s %-14s %s\n" model conversion "worst cosine / SNR, classifier top-1, verdict, seconds"
for model in "${MODELS[@]}"; do
  source="$(model_path "$model")"
  for kind in int8-dynamic int8-static openvino:int8; do
    extension=onnx
    [ "$kind" = openvino:int8 ] && extension=xml
    start=$(date +%s.%N)
    # shellcheck disable=SC2046
    "$CONVGATE" verify "$source" --to "$kind" $(dims "$model") --samples "$SAMPLES" \
      -o "$WORK/$model-$kind.$extension" --out "$WORK/$model-$kind" >/dev/null 2>&1 || true
    seconds=$(echo "$(date +%s.%N) - $start" | bc)
    printf "%-22s %-14s %s  %.1f s\n" "$model" "$kind" "$(summary "$WORK/$model-$kind/report.json")" "$seconds"
  done
  "$BUILD_DIR/convgate-inject-fault" "$WORK/$model-int8-static.onnx" "$WORK/$model-broken.onnx" \
    --fault quant-scale >/dev/null
  # shellcheck disable=SC2046
  # The same profile as the conversion's (verify --target carries no conversion kind).
  "$CONVGATE" compare "$source" "$WORK/$model-broken.onnx" $(dims "$model") --samples "$SAMPLES" \
    $(profile_flags "$WORK/$model-int8-static/report.json") \
    --out "$WORK/$model-broken" >/dev/null 2>&1 || true
  printf "%-22s %-14s %s\n" "$model" "scale x4" "$(summary "$WORK/$model-broken/report.json")"
done
