#!/usr/bin/env bash
# Runs numpy and convgate on the same comparison workload and prints them side by side.
#
# Usage: bench/run.sh [SIZE ...]        (default 1M 16M 128M elements per tensor, float32)
# Environment: BUILD_DIR (default build), THREADS (default nproc), REPEAT (default 3; runs are
# best-of-REPEAT), PYTHON (default /usr/bin/python3, which has numpy).
#
# numpy runs single-threaded (BLAS thread pools pinned to 1), as numpy's elementwise code is.
# GB/s counts the bytes of both inputs once per comparison; "read" is a SIMD sum of both arrays in
# the convgate process, the floor for anything that reads its inputs; "1t/read" is convgate's time
# over that floor's (1 is as fast as reading). "speedup" is numpy's time over convgate's.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
THREADS="${THREADS:-$(nproc)}"
REPEAT="${REPEAT:-3}"
PYTHON="${PYTHON:-/usr/bin/python3}"
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1M 16M 128M)

if [ ! -f "$BUILD_DIR/build.ninja" ] && [ ! -f "$BUILD_DIR/Makefile" ]; then
  cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" --target convgate-compare-bench >/dev/null

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
echo "numpy ($PYTHON, 1 thread) ..." >&2
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
  "$PYTHON" "$ROOT/bench/numpy_stats_bench.py" --repeat "$REPEAT" "${SIZES[@]}" >"$OUT/numpy.txt"
echo "convgate (1 and $THREADS threads) ..." >&2
"$BUILD_DIR/bench/convgate-compare-bench" --threads "$THREADS" --repeat "$REPEAT" "${SIZES[@]}" \
  >"$OUT/convgate.txt"

"$PYTHON" - "$OUT/numpy.txt" "$OUT/convgate.txt" <<'EOF'
import sys


def rows(path):
    result = {}
    for line in open(path):
        fields = dict(item.split("=") for item in line.split())
        result[int(fields["size"])] = fields
    return result


numpy, ours = rows(sys.argv[1]), rows(sys.argv[2])
n = next(iter(ours.values()))["threads"]
columns = ["elements", "numpy s", "cg 1t s", f"cg {n}t s", "speedup 1t", f"speedup {n}t",
           "cg 1t GB/s", f"cg {n}t GB/s", "read 1t GB/s", f"read {n}t GB/s", "1t/read",
           f"{n}t/read"]
print(" ".join(f"{name:>12}" for name in columns))
for size in sorted(ours):
    o = ours[size]
    gb = 2 * 4 * size / 1e9  # both float32 inputs, read once
    t_numpy = float(numpy.get(size, {"numpy": "nan"})["numpy"])
    t1, tn = float(o["compare_1t"]), float(o["compare_nt"])
    r1, rn = float(o["read_1t"]), float(o["read_nt"])
    row = [f"{size}", f"{t_numpy:.4f}", f"{t1:.4f}", f"{tn:.4f}", f"{t_numpy / t1:.1f}",
           f"{t_numpy / tn:.1f}", f"{gb / t1:.2f}", f"{gb / tn:.2f}", f"{gb / r1:.2f}",
           f"{gb / rn:.2f}", f"{t1 / r1:.1f}", f"{tn / rn:.1f}"]
    print(" ".join(f"{cell:>12}" for cell in row))
EOF
