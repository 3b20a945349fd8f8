#!/usr/bin/env bash
# convgate against the peer a user would pick instead: Polygraphy (with its ONNX Runtime, both
# from the project's pinned venv, scripts/python-requirements.txt), on the torchvision fixtures
# (scripts/make_torch_fixtures.sh), each against a copy with one Conv perturbed by 5%
# (convgate-inject-fault), so both tools find a real difference.
#
# Two jobs, each measured as whole processes (start-up, model loading, input generation, runs,
# comparison and result files):
#   outputs   convgate compare SRC TGT
#             vs polygraphy run SRC --onnxrt --save-inputs --save-outputs, then
#                polygraphy run TGT --onnxrt --load-inputs --load-outputs
#   per-node  the same with convgate --per-node, and Polygraphy's --onnx-outputs mark all on both
# Both sides run one sample at the model's own input shape with ONNX Runtime's default threads.
# Polygraphy's time is the sum of its two processes, its peak RSS the larger of the two.
#
# Usage: bench/peers.sh [MODEL ...]   (default: mobilenet_v2 resnet18)
# Environment: BUILD_DIR (default build), REPEAT (default 3; the median time and largest RSS).
# Prints one row per model and job: seconds and peak MiB of each tool and the ratios
# (speed-up = Polygraphy seconds / convgate seconds; memory = convgate MiB / Polygraphy MiB).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
REPEAT="${REPEAT:-3}"
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(mobilenet_v2 resnet18)

VENV="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv"
POLYGRAPHY="$VENV/bin/polygraphy"
if [ ! -x "$POLYGRAPHY" ]; then
  echo "peers.sh: $POLYGRAPHY not found; run ./scripts/setup.sh (it creates the venv)" >&2
  exit 2
fi
cmake --build "$BUILD_DIR" --target convgate convgate-inject-fault >/dev/null
FIXTURES="$("$ROOT/scripts/make_torch_fixtures.sh" | tail -n 1)"
CONVGATE="$BUILD_DIR/src/cli/convgate"
export ORT_DISABLE_TELEMETRY=1

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# Runs one command under /usr/bin/time -v; prints "<peak RSS KiB> <seconds>". Exit 1 (both tools
# report the perturbed model as failing) is expected; anything else stops the benchmark.
measure_once() {
  local log="$OUT/time.txt" status=0
  /usr/bin/time -v "$@" >"$OUT/stdout.txt" 2>"$log" || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then
    echo "peers.sh: exit $status from: $*" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  local rss seconds
  rss="$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")"
  seconds="$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" |
    awk -F: '{ if (NF == 3) print $1 * 3600 + $2 * 60 + $3; else print $1 * 60 + $2 }')"
  echo "$rss $seconds"
}

# convgate: one process. Prints "<peak MiB> <seconds>" (largest RSS, median time of REPEAT runs).
convgate_job() {
  local rows=()
  for _ in $(seq "$REPEAT"); do
    rm -rf "$OUT/cg"
    rows+=("$(measure_once "$CONVGATE" compare "$@" --samples 1 --out "$OUT/cg")")
  done
  summarize "${rows[@]}"
}

# Polygraphy: the source run saves inputs and outputs, the target run loads and compares them.
polygraphy_job() {
  local source_model="$1" target_model="$2"
  shift 2
  local rows=()
  for _ in $(seq "$REPEAT"); do
    rm -f "$OUT/inputs.json" "$OUT/outputs.json"
    read -r rss_a s_a < <(measure_once "$POLYGRAPHY" run "$source_model" --onnxrt "$@" \
      --save-inputs "$OUT/inputs.json" --save-outputs "$OUT/outputs.json")
    read -r rss_b s_b < <(measure_once "$POLYGRAPHY" run "$target_model" --onnxrt "$@" \
      --load-inputs "$OUT/inputs.json" --load-outputs "$OUT/outputs.json")
    rows+=("$((rss_a > rss_b ? rss_a : rss_b)) $(echo "$s_a + $s_b" | bc -l)")
  done
  summarize "${rows[@]}"
}

# "<KiB> <s>" rows -> "<largest MiB> <median s>".
summarize() {
  printf '%s\n' "$@" | /usr/bin/python3 -c '
import statistics, sys
rows = [line.split() for line in sys.stdin if line.strip()]
print("%.0f %.3f" % (max(float(r[0]) for r in rows) / 1024,
                     statistics.median(float(r[1]) for r in rows)))'
}

printf '%-14s %-9s %10s %10s %9s %9s %9s %9s\n' model job "convgate s" "polygr. s" "speed-up" \
  "cg MiB" "pg MiB" "memory"
for model in "${MODELS[@]}"; do
  source_model="$FIXTURES/$model.onnx"
  target_model="$OUT/${model}_perturbed.onnx"
  "$BUILD_DIR/convgate-inject-fault" "$source_model" "$target_model" --fault perturb-conv \
    --factor 1.05 >/dev/null
  for job in outputs per-node; do
    if [ "$job" = outputs ]; then
      read -r cg_mib cg_s < <(convgate_job "$source_model" "$target_model")
      read -r pg_mib pg_s < <(polygraphy_job "$source_model" "$target_model")
    else
      read -r cg_mib cg_s < <(convgate_job "$source_model" "$target_model" --per-node)
      read -r pg_mib pg_s < <(polygraphy_job "$source_model" "$target_model" \
        --onnx-outputs mark all)
    fi
    printf '%-14s %-9s %10.2f %10.2f %8.2fx %9d %9d %8.2fx\n' "$model" "$job" "$cg_s" "$pg_s" \
      "$(echo "$pg_s / $cg_s" | bc -l)" "$cg_mib" "$pg_mib" "$(echo "$cg_mib / $pg_mib" | bc -l)"
  done
done
