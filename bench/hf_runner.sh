#!/usr/bin/env bash
# The hf backend's persistent runner (since issue 25: one hf_runner.py host per convgate process
# holding every model; before, one hf_runner.py serve process per loaded model) against a
# baseline convgate binary (BASELINE, e.g. one built from main before the change, where every
# sample started its own `hf_runner.py run` process that imported transformers and loaded the
# model again): wall time of `convgate verify` of the tiny zoo's gpt2 against its optimum-intel
# OpenVINO export (both sides on the hf backend), alternating the two binaries.
#
# Usage: BASELINE=/path/to/old/convgate bench/hf_runner.sh
# Environment: BUILD_DIR (default build), SAMPLES (default "1 8"), REPEATS (default 3),
# NEW_TOKENS (default 8). The export is made once (cached by convgate's conversion cache).
#
# Prints one row per sample count: the median wall seconds and CPU seconds (user + sys, children
# included: what the runners cost, steadier than wall time on a shared machine) of each binary,
# and new/baseline.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
SAMPLES="${SAMPLES:-1 8}"
REPEATS="${REPEATS:-3}"
NEW_TOKENS="${NEW_TOKENS:-8}"
: "${BASELINE:?set BASELINE to the convgate binary to compare with}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
ZOO="$("$ROOT/scripts/make_hf_zoo.sh" | tail -n 1)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

"$CONVGATE" convert "$ZOO/gpt2" --to optimum-openvino -o "$OUT/gpt2-ov" >/dev/null

seconds() {  # BINARY SAMPLES -> "wall cpu" seconds of one verify
  /usr/bin/time -f '%e %U %S' -o "$OUT/time" "$1" verify "$ZOO/gpt2" --target "$OUT/gpt2-ov" \
    --samples "$2" --new-tokens "$NEW_TOKENS" --dim sequence=6 --val-range 'input_ids:[0,99]' \
    --out "$OUT/result" >/dev/null || true  # the verdict does not matter here, the time does
  tail -n 1 "$OUT/time" | awk '{printf "%s %.2f\n", $1, $2 + $3}'
}

# shellcheck source=bench/timing.sh
source "$ROOT/bench/timing.sh"

printf '%-8s %10s %10s %6s %10s %10s %6s\n' samples base_wall new_wall ratio base_cpu \
  new_cpu ratio
for samples in $SAMPLES; do
  base=() new=()
  for _ in $(seq "$REPEATS"); do
    base+=("$(seconds "$BASELINE" "$samples")")
    new+=("$(seconds "$CONVGATE" "$samples")")
  done
  bw=$(printf '%s\n' "${base[@]}" | cut -d' ' -f1 | median)
  nw=$(printf '%s\n' "${new[@]}" | cut -d' ' -f1 | median)
  bc_=$(printf '%s\n' "${base[@]}" | cut -d' ' -f2 | median)
  nc=$(printf '%s\n' "${new[@]}" | cut -d' ' -f2 | median)
  printf '%-8s %10.2f %10.2f %6.2f %10.2f %10.2f %6.2f\n' "$samples" "$bw" "$nw" \
    "$(echo "$nw / $bw" | bc -l)" "$bc_" "$nc" "$(echo "$nc / $bc_" | bc -l)"
done
