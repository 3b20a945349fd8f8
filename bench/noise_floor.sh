#!/usr/bin/env bash
# The noise floor on real networks: for each torchvision fixture (scripts/make_torch_fixtures.sh)
# and tools/make_noise_models.cc's deepcnn, each output's measured floor, the atol calibration
# chose, the error of faithful conversions and of injected faults as multiples of the floor (the
# detection margin), and what calibration costs (a first run against one with --no-calibrate, and a
# cached one).
#
# Usage: bench/noise_floor.sh [MODEL ...]   (default: deepcnn resnet18_bn_opset13 mobilenet_v2)
# Environment: BUILD_DIR (default build), SAMPLES (default 2), OPENVINO=0 to leave out the IR.
#
# Faithful targets: BatchNorm folded by `convgate transform --pass fold_batchnorm`, ONNX Runtime's
# optimized model at level all (`convert --to ort-optimized:all`), and the OpenVINO IR (`convert
# --to openvino`, run on the openvino backend). Faults (convgate-inject-fault): perturb-conv (1%),
# swap-channels, drop-bias, norm-epsilon (0.1) where the model has a BatchNormalization.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
SAMPLES="${SAMPLES:-2}"
OPENVINO="${OPENVINO:-1}"
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(deepcnn resnet18_bn_opset13 mobilenet_v2)

cmake --build "$BUILD_DIR" --target convgate convgate-inject-fault examples >/dev/null
FIXTURES="$("$ROOT/scripts/make_torch_fixtures.sh" | tail -n 1)"
CONVGATE="$BUILD_DIR/src/cli/convgate"
INJECT="$BUILD_DIR/convgate-inject-fault"
export ORT_DISABLE_TELEMETRY=1

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
export CONVGATE_CACHE_DIR="$OUT/cache"

model_path() {
  case "$1" in
    deepcnn) echo "$BUILD_DIR/examples/deepcnn.onnx" ;;
    *) echo "$FIXTURES/$1.onnx" ;;
  esac
}

# deepcnn is fed [0, 255), as a detector is; the torchvision fixtures their usual [0, 1).
range_of() { [ "$1" = deepcnn ] && echo "[0,255)" || echo "[0,1)"; }

seconds_of() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0;
  for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$1"; }

# Prints one row per output: model, target, output, floor, atol, max|diff|, multiple, verdict.
rows() {
  local model="$1" target="$2" report="$3"
  /usr/bin/python3 - "$model" "$target" "$report" <<'PY'
import json, sys
model, target, path = sys.argv[1:]
report = json.load(open(path))
floors = report["policy"].get("noise_floors", {})
worst = {}
for r in report["results"]:
    s = r.get("stats", {}).get("errors", {}) if "stats" in r else {}
    row = worst.setdefault(r["output"], {"diff": 0.0, "mult": 0.0, "pass": True,
                                         "atol": r.get("policy", {}).get("atol")})
    if r.get("policy"): row["atol"] = r["policy"]["atol"]
    row["diff"] = max(row["diff"], s.get("max_abs_error", 0.0) or 0.0)
    row["mult"] = max(row["mult"], r.get("noise_floor_multiple", 0.0))
    row["pass"] = row["pass"] and r["verdict"] == "pass"
for name, row in worst.items():
    floor = floors.get(name, {}).get("max_abs", 0.0)
    print(f"| {model} | {target} | {name} | {floor:.2e} | {row['atol']:.2e} | {row['diff']:.2e} "
          f"| {row['mult']:.3g}x | {'PASS' if row['pass'] else 'FAIL'} |")
PY
}

compare() {  # model target-name target-path [extra...]
  local model="$1" name="$2" target="$3"; shift 3
  local report="$OUT/$model-$name"
  "$CONVGATE" compare "$(model_path "$model")" "$target" --val-range "$(range_of "$model")" \
    --samples "$SAMPLES" --calibrate --out "$report" "$@" >/dev/null 2>&1 || true
  [ -f "$report/report.json" ] && rows "$model" "$name" "$report/report.json"
}

echo "| model | target | output | floor | atol | max abs diff | x floor | verdict |"
echo "|---|---|---|---|---|---|---|---|"
for model in "${MODELS[@]}"; do
  src="$(model_path "$model")"
  "$CONVGATE" transform "$src" --pass fold_batchnorm -o "$OUT/$model-folded.onnx" >/dev/null 2>&1 &&
    compare "$model" folded "$OUT/$model-folded.onnx"
  "$CONVGATE" convert "$src" --to ort-optimized:all -o "$OUT/$model-ort-all.onnx" >/dev/null 2>&1 &&
    compare "$model" ort-all "$OUT/$model-ort-all.onnx"
  if [ "$OPENVINO" = 1 ] &&
    "$CONVGATE" convert "$src" --to openvino -o "$OUT/$model-ir" >/dev/null 2>&1; then
    compare "$model" openvino-ir "$OUT/$model-ir.xml"
  fi
  for fault in perturb-conv swap-channels drop-bias norm-epsilon; do
    "$INJECT" "$src" "$OUT/$model-$fault.onnx" --fault "$fault" >/dev/null 2>&1 || continue
    compare "$model" "$fault" "$OUT/$model-$fault.onnx"
  done
done

echo
echo "| model | no calibration (s) | first calibrated run (s) | cached (s) | extra, first | extra, cached |"
echo "|---|---|---|---|---|---|"
for model in "${MODELS[@]}"; do
  src="$(model_path "$model")"
  args=(compare "$src" "$src" --val-range "$(range_of "$model")" --samples "$SAMPLES")
  rm -rf "$CONVGATE_CACHE_DIR"
  /usr/bin/time -v "$CONVGATE" "${args[@]}" >/dev/null 2>"$OUT/t0" || true
  /usr/bin/time -v "$CONVGATE" "${args[@]}" --calibrate >/dev/null 2>"$OUT/t1" || true
  /usr/bin/time -v "$CONVGATE" "${args[@]}" --calibrate >/dev/null 2>"$OUT/t2" || true
  t0="$(seconds_of "$OUT/t0")"; t1="$(seconds_of "$OUT/t1")"; t2="$(seconds_of "$OUT/t2")"
  echo "| $model | $t0 | $t1 | $t2 | $(echo "$t1 - $t0" | bc) | $(echo "$t2 - $t0" | bc) |"
done
