"""The naive per-node comparison in bare ONNX Runtime: mark every node output of both models as a
graph output, load both sessions in one process, run one sample, compare what both produce. What
users write by hand (and complain about the memory of); bench/per_node.sh sets convgate's
--per-node beside it. Prints "<peak RSS KiB> <seconds> <tensors compared>".

Run with the project venv's python (scripts/python-requirements.txt: onnx, onnxruntime, numpy):
  ~/.cache/convgate-deps/venv/bin/python bench/mark_all_ort.py SRC.onnx TGT.onnx [SHAPE]
SHAPE (e.g. 1,3,320,320) is the first input's shape; otherwise symbolic dims are 1.
"""
import resource
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort


def marked_session(path):
    model = onnx.load(path)
    declared = {output.name for output in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name and name not in declared:
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                declared.add(name)
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def main():
    start = time.monotonic()
    source, target = marked_session(sys.argv[1]), marked_session(sys.argv[2])
    rng = np.random.default_rng(0)
    feeds = {}
    for index, declared in enumerate(source.get_inputs()):
        shape = [dim if isinstance(dim, int) else 1 for dim in declared.shape]
        if index == 0 and len(sys.argv) > 3:
            shape = [int(dim) for dim in sys.argv[3].split(",")]
        feeds[declared.name] = rng.random(shape, dtype=np.float32)
    names = [output.name for output in source.get_outputs()]
    source_values = dict(zip(names, source.run(names, feeds)))
    target_names = {output.name for output in target.get_outputs()}
    shared = [name for name in names if name in target_names]
    target_values = dict(zip(shared, target.run(shared, feeds)))
    compared = 0
    for name in shared:
        a, b = source_values[name], target_values[name]
        if a.shape == b.shape and a.dtype.kind == "f":
            if a.size:
                np.max(np.abs(a.astype(np.float64) - b))
            compared += 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(peak, "%.3f" % (time.monotonic() - start), compared)


if __name__ == "__main__":
    main()
