#!/usr/bin/env python3
"""A model over protobuf's 2 GB limit (scripts/make_large_model.py: 2.42 GB of weights as external
data) through the built-in conversions: each streams one tensor at a time, so its peak memory
stays near the largest tensor (604 MB), not the model; the outputs keep external data and load in
ONNX Runtime with the same results.

usage: large_model_test.py BUILD_DIR SOURCE_DIR  (Debian's python3: numpy and onnx)
Prints each step's seconds and peak RSS (wait4: convgate and the converter it forks).
"""
import os
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
LARGEST_TENSOR = 12288 * 12288 * 4


def run(argv, cwd):
    """Runs argv; returns (exit code, output, seconds, peak RSS in bytes)."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, output, time.monotonic() - start, usage.ru_maxrss * 1024


def main():
    build, source = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    convgate = os.path.join(build, "src", "cli", "convgate")
    made = subprocess.run([sys.executable, os.path.join(source, "scripts", "make_large_model.py")],
                          stdout=subprocess.PIPE, check=True, timeout=1800)
    folder = made.stdout.decode().strip().splitlines()[-1]
    model = os.path.join(folder, "big.onnx")
    model_bytes = os.path.getsize(model) + os.path.getsize(model + ".weights")
    assert model_bytes > 2 ** 31, model_bytes
    failures = []
    with tempfile.TemporaryDirectory(prefix="convgate-large-") as work:
        steps = [
            ("fp16", [convgate, "convert", model, "--to", "fp16", "-o", "f16.onnx", "--no-cache"],
             2 * LARGEST_TENSOR),
            ("opset:16", [convgate, "convert", model, "--to", "opset:16", "-o", "o16.onnx",
                          "--no-cache"], 256 * MIB),
            ("transform", [convgate, "transform", model, "--pass", "eliminate_identity", "-o",
                           "t.onnx"], 256 * MIB),
            ("compare fp16", [convgate, "compare", model, "f16.onnx"], None),
        ]
        print("model: %.2f GB in %s, largest tensor %d MiB" %
              (model_bytes / 1e9, folder, LARGEST_TENSOR // MIB))
        for name, argv, bound in steps:
            code, output, seconds, peak = run(argv, work)
            print("%-13s exit %d  %6.1f s  peak %5d MiB (%.2fx the largest tensor, %.2fx the model)"
                  % (name, code, seconds, peak // MIB, peak / LARGEST_TENSOR, peak / model_bytes))
            if code != 0:
                failures.append("%s: exit %d\n%s" % (name, code, output))
            elif bound is not None and peak > bound:
                failures.append("%s: peak RSS %d MiB over %d MiB: not streamed" %
                                (name, peak // MIB, bound // MIB))
            if name != "compare fp16" and code == 0:
                out = argv[argv.index("-o") + 1]
                if not os.path.isfile(os.path.join(work, out + ".data")):
                    failures.append("%s: no %s.data beside the output" % (name, out))
                elif os.path.getsize(os.path.join(work, out)) > 1 << 20:
                    failures.append("%s: the weights are inside %s" % (name, out))
    for failure in failures:
        print("FAIL " + failure)
    print("%d of %d steps passed" % (len(steps) - len(failures), len(steps)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
