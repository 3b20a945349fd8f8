#!/usr/bin/env bash
# --data image: throughput (images/s) beside OpenCV's own decode rate and a hand-written OpenCV
# loader doing the same work, in one process (bench/data_loader_bench.cc), then a whole
# `convgate run` on the same folder beside the bare model run.
# Usage: bench/data_loader.sh [N_IMAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
cmake --build build --target convgate-data-loader-bench convgate >/dev/null
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
build/bench/convgate-data-loader-bench --images "$n" --repeat 3 "$dir"
start=$(date +%s.%N)
build/src/cli/convgate run build/examples/data/brightspot.onnx --data "image:$dir" --resize-mode crop >/dev/null
end=$(date +%s.%N)
echo "convgate run --data image: on $n images: $(echo "$end - $start" | bc) s wall"
