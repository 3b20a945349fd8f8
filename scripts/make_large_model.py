#!/usr/bin/env python3
"""Makes the external-data fixture over protobuf's 2 GB limit once, and reuses it afterwards.

    ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/large-<key>/
        big.onnx          y = x @ W1 @ W2 @ W3 @ W4, x float32[1, 12288]
        big.onnx.weights  the four float32 [12288, 12288] weights (604 MB each, 2.42 GB)

<key> hashes this script. The weights are seeded uniform values scaled to keep every layer's
output near unit variance, written a block of rows at a time (the generator never holds a weight).
The folder appears atomically (made in a temporary folder, then renamed). Never committed. Takes
about 30 s and 2.42 GB of disk. Needs numpy and onnx (the project's venv).

Prints the folder on the last line of stdout.
"""
import hashlib
import os
import shutil
import sys
import tempfile

SIDE = 12288
LAYERS = 4
ROWS_PER_BLOCK = 1024


def cache_key():
    with open(__file__, "rb") as script:
        return hashlib.sha256(script.read()).hexdigest()[:16]


def write_weights(path):
    import numpy as np

    scale = np.float32((3.0 / SIDE) ** 0.5)  # uniform [-a, a] has variance a^2 / 3 = 1 / SIDE
    offsets = []
    with open(path, "wb") as data:
        for layer in range(LAYERS):
            rng = np.random.default_rng(layer + 1)
            offsets.append(data.tell())
            for _ in range(SIDE // ROWS_PER_BLOCK):
                block = rng.random((ROWS_PER_BLOCK, SIDE), dtype=np.float32)
                block = (block * 2 - 1) * scale
                data.write(block.astype("<f4").tobytes())
    return offsets


def make_model(folder):
    import onnx
    from onnx import TensorProto, helper

    offsets = write_weights(os.path.join(folder, "big.onnx.weights"))
    length = SIDE * SIDE * 4
    inits = []
    nodes = []
    previous = "x"
    for layer, offset in enumerate(offsets):
        name = "w%d" % (layer + 1)
        tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[SIDE, SIDE])
        tensor.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "big.onnx.weights"), ("offset", str(offset)),
                           ("length", str(length))):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, value
        inits.append(tensor)
        output = "y" if layer == LAYERS - 1 else "h%d" % (layer + 1)
        nodes.append(helper.make_node("MatMul", [previous, name], [output],
                                      name="layer%d" % (layer + 1)))
        previous = output
    graph = helper.make_graph(
        nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SIDE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SIDE])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(os.path.join(folder, "big.onnx"), "wb") as out:
        out.write(model.SerializeToString())


def main():
    cache = os.environ.get("CONVGATE_FIXTURE_CACHE") or os.path.expanduser(
        "~/.cache/convgate-fixtures")
    final = os.path.join(cache, "large-" + cache_key())
    if not os.path.isfile(os.path.join(final, ".complete")):
        os.makedirs(cache, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".large-staging.", dir=cache)
        try:
            print("[large-model] generating into %s" % staging, file=sys.stderr)
            make_model(staging)
            open(os.path.join(staging, ".complete"), "w").close()
            os.chmod(staging, 0o755)
            try:
                os.rename(staging, final)
            except OSError:  # another run finished first: its folder is as good
                if not os.path.isfile(os.path.join(final, ".complete")):
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    print(final)


if __name__ == "__main__":
    main()
