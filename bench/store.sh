#!/usr/bin/env bash
# The results store's figures (issue 13): ms per RecordJob and the history queries over 100,000
# job rows on SQLite and on a throwaway PostgreSQL 15 (unix socket, started and stopped here by
# scripts/services/postgres.sh), each against a bare INSERT/SELECT through sqlite3/libpq in the
# same run (bench/store_bench.cc); then `convgate history` and `history --regressions` on the
# filled stores, end to end, against dumping the jobs table with the sqlite3 and psql clients.
#
# Usage: bench/store.sh
# Environment: BUILD_DIR (default build), JOBS (RecordJobs, default 1000), ROWS (default 100000),
# ENTRIES (default 1000), REPEAT (CLI runs, best of; default 3).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
JOBS="${JOBS:-1000}"
ROWS="${ROWS:-100000}"
ENTRIES="${ENTRIES:-1000}"
REPEAT="${REPEAT:-3}"

if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target convgate convgate-store-bench >/dev/null
CONVGATE="$BUILD_DIR/src/cli/convgate"

# Its own cluster folder, so a ctest run of label postgres is not disturbed; under /tmp, which the
# postgres user the server runs as can enter (a checkout under /root is not).
PG_DIR="/tmp/convgate-pg-bench-$$"
OUT="$(mktemp -d)"
trap '"$ROOT/scripts/services/postgres.sh" stop "$PG_DIR"; rm -rf "$OUT" "$PG_DIR"' EXIT
URL="$("$ROOT/scripts/services/postgres.sh" start "$PG_DIR")"
DB="$OUT/store.db"

"$BUILD_DIR/bench/convgate-store-bench" --sqlite "$DB" --postgres "$URL" --jobs "$JOBS" \
  --rows "$ROWS" --entries "$ENTRIES" 2> >(grep -v 'does not exist, skipping' >&2)

# Best of REPEAT wall times of a command, in seconds.
best() {
  local best_s=""
  for _ in $(seq "$REPEAT"); do
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null
    end=$(date +%s.%N)
    local s
    s=$(echo "$end - $start" | bc)
    if [ -z "$best_s" ] || (( $(echo "$s < $best_s" | bc) )); then best_s=$s; fi
  done
  echo "$best_s"
}

ratio() { echo "scale=2; $1 / $2" | bc; }

# `history --regressions` exits 1 when it finds regressions (the bench's last run has 10).
regressions() { "$CONVGATE" history --store "$1" --regressions || [ $? -eq 1 ]; }

echo
echo "convgate history on $ROWS job rows, best of $REPEAT (wall s; ratio to the client's dump)"
COLUMNS="id, run_id, entry_id, entry_key, model_id, model_path, model_sha256, verdict, finished_at"
for backend in sqlite postgresql; do
  if [ $backend = sqlite ]; then
    store="$DB"
    dump=$(best sqlite3 "$DB" "SELECT $COLUMNS FROM jobs")
  else
    store="$URL"
    dump=$(best psql "$URL" -Atc "SELECT $COLUMNS FROM jobs")
  fi
  latest=$(best "$CONVGATE" history --store "$store")
  regress=$(best regressions "$store")
  printf "%-10s client dump %6.3f s   history %6.3f s (%s)   history --regressions %6.3f s (%s)\n" \
    $backend "$dump" "$latest" "$(ratio "$latest" "$dump")" "$regress" "$(ratio "$regress" "$dump")"
done
