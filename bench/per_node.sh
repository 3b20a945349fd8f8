#!/usr/bin/env bash
# Per-node comparison against plain compare of the same pair: peak RSS and wall time, on the
# torchvision fixtures (scripts/make_torch_fixtures.sh) with one Conv perturbed by
# convgate-inject-fault, so per-node validation also re-runs the failing nodes alone.
#
# Usage: bench/per_node.sh [MODEL ...]     (default: mobilenet_v2 resnet18)
# Environment: BUILD_DIR (default build), BUDGET (default 16MiB: small enough that every model
# here needs several chunks), SAMPLES (default 1), LOCAL_ERROR (default failed).
#
# Prints one row per model: plain and per-node peak RSS (MiB) and seconds, their ratios, and how
# many chunks and runs per-node validation took. The target for the RSS ratio is <= 2.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
BUDGET="${BUDGET:-16MiB}"
SAMPLES="${SAMPLES:-1}"
LOCAL_ERROR="${LOCAL_ERROR:-failed}"
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(mobilenet_v2 resnet18)

if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target convgate convgate-inject-fault >/dev/null
FIXTURES="$("$ROOT/scripts/make_torch_fixtures.sh" | tail -n 1)"
CONVGATE="$BUILD_DIR/src/cli/convgate"
export ORT_DISABLE_TELEMETRY=1

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# Runs convgate under /usr/bin/time -v; prints "<peak RSS KiB> <seconds>". Exit 1 (a failed gate:
# the target is broken on purpose) is expected.
measure() {
  local log="$OUT/time.txt"
  /usr/bin/time -v "$CONVGATE" "$@" >"$OUT/stdout.txt" 2>"$log" || [ $? -eq 1 ]
  local rss seconds
  rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
  seconds="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')"
  echo "$rss $seconds"
}

printf '%-14s %10s %10s %9s %9s %9s %9s %7s %6s\n' model "plain MiB" "node MiB" "RSS x" \
  "plain s" "node s" "time x" chunks runs
for model in "${MODELS[@]}"; do
  source_model="$FIXTURES/$model.onnx"
  target_model="$OUT/${model}_perturbed.onnx"
  "$BUILD_DIR/convgate-inject-fault" "$source_model" "$target_model" --fault perturb-conv \
    --factor 1.05 >/dev/null
  read -r plain_rss plain_s < <(measure compare "$source_model" "$target_model" \
    --samples "$SAMPLES" --threads 1)
  read -r node_rss node_s < <(measure compare "$source_model" "$target_model" \
    --samples "$SAMPLES" --threads 1 --per-node --memory-budget "$BUDGET" \
    --local-error "$LOCAL_ERROR" --json)
  read -r chunks runs < <(/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["per_node"]
print(p["chunks"], p["runs"])' "$OUT/stdout.txt")
  awk -v m="$model" -v pr="$plain_rss" -v nr="$node_rss" -v ps="$plain_s" -v ns="$node_s" \
    -v c="$chunks" -v r="$runs" 'BEGIN {
      printf "%-14s %10.1f %10.1f %9.2f %9.2f %9.2f %9.2f %7d %6d\n", m, pr / 1024, nr / 1024,
        nr / pr, ps, ns, ns / ps, c, r }'
done
