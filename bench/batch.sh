#!/usr/bin/env bash
# `convgate batch` against the same work done by hand, and the results store at scale:
#  (a) batch -j 1 over 50 small entries vs the sum of 50 separate `convgate verify` runs of the
#      same entries (the batch's overhead: pre-flight hashing, the store, the children);
#  (b) batch -j 2 vs -j 1 (the speed-up on this machine's cores);
#  (c) SQLite RecordJob, ms per job (convgate-store-bench, one transaction per job);
#  (d) `convgate history` and `history --regressions` over a store of 100,000 job rows.
# Every figure is a ratio against a baseline measured in the same run, or a time per operation.
#
# Usage: bench/batch.sh     Environment: BUILD_DIR (default build), N (default 50), ROWS (100000)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
N="${N:-50}"
ROWS="${ROWS:-100000}"
cmake --build "$BUILD_DIR" --target convgate examples convgate-store-bench >/dev/null
CONVGATE="$BUILD_DIR/src/cli/convgate"
export ORT_DISABLE_TELEMETRY=1
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
export CONVGATE_CACHE_DIR="$OUT/cache"

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }

"$ROOT/bench/make_batch_models.sh" "$BUILD_DIR/examples" "$OUT/zoo" "$N"
echo "load before: $(uptime)"

# (a) the baseline: each entry's own command line, one after the other.
start=$(now)
for i in $(seq 1 "$N"); do
  "$CONVGATE" verify "$OUT/zoo/models/m$i.onnx" --target "$OUT/zoo/models/m${i}_converted.onnx" \
    --out "$OUT/single/m$i" >/dev/null
done
separate=$(elapsed "$start" "$(now)")
start=$(now)
"$CONVGATE" batch "$OUT/zoo/manifest.yaml" --out "$OUT/j1" -j 1 --quiet >/dev/null
j1=$(elapsed "$start" "$(now)")
# (b)
start=$(now)
"$CONVGATE" batch "$OUT/zoo/manifest.yaml" --out "$OUT/j2" -j 2 --quiet >/dev/null
j2=$(elapsed "$start" "$(now)")
printf '(a) %d separate verify: %.2f s; batch -j 1: %.2f s; ratio %.3fx (target <= 1.15x)\n' \
  "$N" "$separate" "$j1" "$(echo "$j1 / $separate" | bc -l)"
printf '(b) batch -j 2: %.2f s; speed-up over -j 1: %.2fx (target >= 1.7x on 2 cores)\n' \
  "$j2" "$(echo "$j1 / $j2" | bc -l)"
echo "load after: $(uptime)"

# (c) and (d)
# convgate-store-bench (bench/store.sh runs it on PostgreSQL too) prints RecordJob's ms per job
# beside a bare INSERT, then leaves h.db filled with ROWS job rows for (d).
"$BUILD_DIR/bench/convgate-store-bench" --sqlite "$OUT/h.db" --rows "$ROWS" --entries 1000 |
  sed 's/^/(c) /'
# Wall and CPU (user + sys) seconds of one command: on a loaded machine the CPU time is the figure
# that does not depend on the other processes.
timed() {
  /usr/bin/time -o "$OUT/time" -f "%e %U %S" "$@" >/dev/null 2>&1 || true
  tail -1 "$OUT/time" | awk '{printf "%.3f s wall, %.3f s cpu", $1, $2 + $3}'
}
printf '(d) %d job rows:\n' "$ROWS"
echo "    history:                    $(timed "$CONVGATE" history --store "$OUT/h.db")"
echo "    history --regressions:      $(timed "$CONVGATE" history --store "$OUT/h.db" --regressions)"
echo "    history bench-7 --trend:    $(timed "$CONVGATE" history --store "$OUT/h.db" bench-7 --trend max_abs_error)"
echo "    (target < 0.5 s)"
