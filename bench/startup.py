#!/usr/bin/python3
"""Whole processes, side by side: what a user waits for, start-up included.

  1. `convgate --version` against a C++ hello-world linked only with ONNX Runtime
     (bench/hello_ort.cc): wall time and peak RSS.
  2. `convgate compare a.npz b.npz` on float32 pairs of SIZE elements against a fresh Debian
     python3 process that loads the same two .npz files with numpy and computes the statistics
     convgate reports (bench/numpy_stats_bench.py's `statistics`).

Each command runs REPEAT times (default 7); the median wall time and the largest peak RSS (from
wait4) are reported, with ratios. Usage: bench/startup.py [--build DIR] [--repeat N] [SIZE...]
(SIZE in elements, default 16M).
"""
import argparse
import os
import statistics as stats
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from numpy_stats_bench import make_pair, parse_size  # noqa: E402

NUMPY_WHOLE_PROCESS = r'''
import sys
sys.path.insert(0, sys.argv[3])
import numpy as np
from numpy_stats_bench import statistics
s = np.load(sys.argv[1])["out"]
t = np.load(sys.argv[2])["out"]
r = statistics(s, t)
print(r["mismatches"], r["max_abs"])
'''


def measure(argv, repeat, env=None):
    """Median wall seconds and max peak RSS (MiB) of `repeat` runs of argv.

    Peak RSS comes from /usr/bin/time -o, not from wait4: Linux carries a child's maximum RSS
    across exec, so wait4 would report this Python process's own size for a small program.
    """
    walls, peak = [], 0.0
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        for _ in range(repeat):
            start = time.perf_counter()
            proc = subprocess.run(["/usr/bin/time", "-o", rss_file.name, "-f", "%M"] + argv,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            walls.append(time.perf_counter() - start)
            if proc.returncode not in (0, 1):
                sys.exit(f"{' '.join(argv)} exited {proc.returncode}")
            with open(rss_file.name) as f:
                peak = max(peak, int(f.read().split()[-1]) / 1024)
    return stats.median(walls), peak


def row(label, seconds, rss):
    print(f"  {label:<46} {seconds * 1000:9.1f} ms {rss:8.1f} MiB")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("sizes", nargs="*", default=["16M"])
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    subprocess.run(["cmake", "--build", build, "--target", "convgate", "convgate-hello-ort"],
                   check=True, stdout=subprocess.DEVNULL)
    convgate = os.path.join(build, "src", "cli", "convgate")
    hello = os.path.join(build, "bench", "convgate-hello-ort")
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")

    print("start-up (median wall, peak RSS):")
    version = measure([convgate, "--version"], args.repeat, env)
    baseline = measure([hello], args.repeat, env)
    row("convgate --version", *version)
    row("hello-world linked with ONNX Runtime", *baseline)
    print(f"  ratio: {version[0] / baseline[0]:.2f}x the time, {version[1]:.1f} MiB "
          f"(targets: <= 3x, <= 40 MiB)")

    numpy_env = dict(env, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as work:
        for size_text in args.sizes:
            size = parse_size(size_text)
            s, t = make_pair(size)
            a, b = os.path.join(work, "a.npz"), os.path.join(work, "b.npz")
            np.savez(a, out=s)
            np.savez(b, out=t)
            del s, t
            print(f"compare two .npz of {size} float32 elements (whole process):")
            ours = measure([convgate, "compare", a, b, "--atol", "1e-5", "--rtol", "1e-3"],
                           args.repeat, env)
            theirs = measure(["/usr/bin/python3", "-c", NUMPY_WHOLE_PROCESS, a, b, HERE],
                             args.repeat, numpy_env)
            row("convgate compare a.npz b.npz", *ours)
            row("python3 + numpy, same statistics", *theirs)
            print(f"  convgate is {theirs[0] / ours[0]:.2f}x faster (target: >= 3x)")


if __name__ == "__main__":
    sys.exit(main())
