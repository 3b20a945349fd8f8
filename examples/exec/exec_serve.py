"""The exec protocol's two modes for a runner script (docs/backends.md, "exec"):

    runner.py MODEL [OPTIONS] INPUTS.npz OUTPUTS.npz        one sample: convgate starts a process
                                                            per sample ({inputs} {outputs})
    runner.py MODEL [OPTIONS] --serve INPUTS_DIR OUTPUTS_DIR
                                                            every sample from one process
                                                            ({inputs_dir} {outputs_dir})

Serving: for each line NAME on stdin, read INPUTS_DIR/NAME.npz, write OUTPUTS_DIR/NAME.npz, then
print "ok NAME" on stdout (or "error MESSAGE" when the sample cannot run; the process goes on).
Exit at the end of stdin. Logs go to stderr: stdout carries the answers.

A runner calls `main(args, load, run, usage)`: `load(model)` once, then `run(state, arrays)` per
sample with the inputs as {name: ndarray}, returning {name: ndarray}; it raises RunnerError for a
sample it cannot run.
"""
import os
import sys

import numpy as np


class RunnerError(Exception):
    """A sample the model cannot run: a message for the user, no traceback."""


def read_inputs(path):
    with np.load(path) as npz:
        return {name: npz[name] for name in npz.files}


def write_outputs(path, outputs):
    # Written under a temporary name and renamed: convgate never reads half an archive.
    with open(path + ".part", "wb") as f:
        np.savez(f, **outputs)
    os.replace(path + ".part", path)


def serve(state, run, inputs_dir, outputs_dir):
    for line in sys.stdin:
        name = line.strip()
        if not name:
            continue
        try:
            outputs = run(state, read_inputs(os.path.join(inputs_dir, name + ".npz")))
            write_outputs(os.path.join(outputs_dir, name + ".npz"), outputs)
        except Exception as e:  # the sample fails, the process serves the next one
            print("error " + " ".join(str(e).split()), flush=True)
            continue
        print("ok " + name, flush=True)
    return 0


def main(args, load, run, usage):
    """args: [MODEL, INPUTS, OUTPUTS] or [MODEL, "--serve", INPUTS_DIR, OUTPUTS_DIR]."""
    serving = len(args) == 4 and args[1] == "--serve"
    if len(args) != 3 and not serving:
        print(usage, file=sys.stderr)
        return 2
    try:
        state = load(args[0])
        if serving:
            return serve(state, run, args[2], args[3])
        write_outputs(args[2], run(state, read_inputs(args[1])))
    except RunnerError as e:
        print(str(e), file=sys.stderr)
        return 3
    return 0
