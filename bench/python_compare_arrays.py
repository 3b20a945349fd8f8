#!/usr/bin/env python3
"""convgate.compare_arrays against numpy computing the same statistics, in the same process.

Usage: PYTHONPATH=build/python python3 bench/python_compare_arrays.py [--repeat R] [SIZE...]
(SIZE in elements, "16M" allowed; default 16M). Prints, per size, the best of R runs of each and
their ratio. Data and numpy's statistics are bench/numpy_stats_bench.py's (the recipe
compare_bench.cc uses). Run it with the venv's python (numpy 2) or Debian's (numpy 1.24); numpy
uses its default threads and convgate its own.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import convgate  # noqa: E402
from numpy_stats_bench import make_pair, statistics  # noqa: E402


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def size(text):
    return int(float(text[:-1]) * (1 << 20)) if text.endswith("M") else int(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("sizes", nargs="*", default=["16M"])
    args = parser.parse_args()
    print("convgate %s, numpy %s, python %s" % (convgate.version(), np.__version__,
                                                 sys.version.split()[0]))
    print("%10s %12s %12s %8s" % ("elements", "numpy s", "convgate s", "ratio"))
    for n in map(size, args.sizes):
        s, t = make_pair(n)
        convgate.compare_arrays(s[:1000], t[:1000])  # loads the SIMD kernels once
        numpy_s = best(lambda: statistics(s, t), args.repeat)
        report = convgate.compare_arrays(s, t)
        assert report.output("output").num_elements == n
        convgate_s = best(lambda: convgate.compare_arrays(s, t), args.repeat)
        print("%10d %12.4f %12.4f %7.1fx" % (n, numpy_s, convgate_s, numpy_s / convgate_s))


if __name__ == "__main__":
    main()
