#!/usr/bin/python3
"""Times the statistics convgate's CompareTensors computes, written the way numpy users write them.

Usage: numpy_stats_bench.py [--repeat R] SIZE...   (SIZE in elements, "16M" allowed)
Prints one line per size for bench/run.sh:  size=<n> numpy=<seconds>  (best of R runs).

Same data recipe as compare_bench.cc (float32 source uniform in [-1, 1], target = source times
(1 + noise of 1e-4), 0.1% of elements off by 0.01), from numpy's generator: the values differ, the
work does not. Run with Debian's /usr/bin/python3 (numpy) and OPENBLAS_NUM_THREADS=1 etc. for a
single-threaded numpy, as run.sh does.
"""
import argparse
import sys
import time

import numpy as np

ATOL, RTOL = 1e-5, 1e-3  # convgate's defaults
PERCENTILES = [50.0, 75.0, 90.0, 99.0, 99.5]


def make_pair(n):
    rng = np.random.default_rng(20261125)
    s = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    t = s * (1.0 + rng.uniform(-1e-4, 1e-4, n)).astype(np.float32)
    t[rng.random(n) < 1e-3] += np.float32(0.01)
    return s, t


def statistics(s, t):
    """Everything CompareTensors reports, as a numpy user computes it on float32 arrays."""
    out = {}
    for name, x in (("source", s), ("target", t)):
        finite = np.isfinite(x)
        out[name] = (x.min(), x.max(), x.mean(), np.isnan(x).sum(), np.isinf(x).sum(), finite.sum())
    diff = np.abs(t - s)
    close = np.isclose(t, s, rtol=RTOL, atol=ATOL)
    out["mismatches"] = int((~close).sum())
    out["percentiles"] = np.percentile(diff, PERCENTILES)
    out["max_abs"], out["mean_abs"], out["argmax"] = diff.max(), diff.mean(), int(diff.argmax())
    rel = diff / np.maximum(np.abs(s), 1e-12)
    out["max_rel"], out["mean_rel"] = rel.max(), rel.mean()
    err = t - s
    out["rmse"] = np.sqrt(np.mean(err * err))
    out["cosine"] = np.dot(s, t) / (np.linalg.norm(s) * np.linalg.norm(t))
    out["snr_db"] = 10 * np.log10(np.sum(s * s) / np.sum(err * err))
    return out


def parse_size(text):
    scale = {"M": 1 << 20, "K": 1 << 10}.get(text[-1], 1)
    return int(text.rstrip("MK")) * scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("sizes", nargs="+")
    args = parser.parse_args()
    for size in map(parse_size, args.sizes):
        s, t = make_pair(size)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = statistics(s, t)
            best = min(best, time.perf_counter() - start)
        print(f"size={size} numpy={best:.6f} mismatches={result['mismatches']}", flush=True)
        del s, t


if __name__ == "__main__":
    sys.exit(main())
