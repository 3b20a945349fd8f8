#!/usr/bin/env python3
"""`convgate repair` against the tools users run to find the nodes float16 must leave in float32,
on the same model, inputs and gate:

  convgate repair                     per-node blame, one node kept per run
  onnxconverter-common                auto_convert_mixed_precision (pinned in the venv), its own
                                      validation function on the first sample
  ModelOpt AutoCast                   modelopt.onnx.autocast.convert_to_mixed_precision (pinned in
                                      the venv, CPU): one reference run on the first sample, nodes
                                      whose inputs or outputs exceed its data_max (512) or whose
                                      weights exceed float16's range stay float32
  bisection                           Polygraphy-style (`debug precision`): the shortest prefix of
                                      the topological order kept in float32 that passes

Fixtures (--fixture):
  overflow      torchvision resnet18 (scripts/make_torch_fixtures.sh) with one layer rescaled by 1e5
                and back (convgate-inject-fault --fault fp16-overflow): exact in float32,
                overflowing in float16.
  underflow     the same rescaling by 1e-6 and back: the first Conv's weights (~5e-8) fall below
                float16's smallest subnormal (6e-8) and flush to 0 or 6e-8, while every value of
                the model stays far inside float16's range.

Every result is judged by the same gate: `convgate compare SOURCE RESULT --load-inputs inputs.npz
--policy examples/policies/fp16-network.yaml`. Prints per tool: nodes kept in float32, model
conversions, seconds, and whether the result passes that gate.

Usage: ~/.cache/convgate-deps/venv/bin/python bench/repair_peers.py [--samples N] [--model NAME]
       [--fixture overflow|underflow]
(BUILD_DIR: default build)
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD_DIR", os.path.join(ROOT, "build"))
CONVGATE = os.path.join(BUILD, "src", "cli", "convgate")
POLICY = os.path.join(ROOT, "examples", "policies", "fp16-network.yaml")


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def gate(source, candidate, inputs):
    """The one gate every result is judged by."""
    return run([CONVGATE, "compare", source, candidate, "--load-inputs", inputs,
                "--policy", POLICY]).returncode == 0


def fp16_with(source, out, blocked, cache):
    args = [CONVGATE, "convert", source, "--to", "fp16", "-o", out, "--cache-dir", cache]
    if blocked:
        args += ["--param", "node_block_list=" + ",".join(blocked)]
    result = run(args)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)


def float32_nodes(path, names):
    """Nodes of `names` whose outputs stay float32 in the model at `path`."""
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(model.graph.value_info) + list(model.graph.output)}
    kept = 0
    for node in model.graph.node:
        if node.name in names and node.op_type != "Cast" and node.output and \
                types.get(node.output[0]) == onnx.TensorProto.FLOAT:
            kept += 1
    return kept


def repair(source, inputs, work):
    start = time.perf_counter()
    out = os.path.join(work, "repaired.onnx")
    result = run([CONVGATE, "repair", source, "--to", "fp16", "-o", out, "--load-inputs", inputs,
                  "--max-runs", "40", "--out", os.path.join(work, "repair")],
                 env=dict(os.environ, CONVGATE_CACHE_DIR=os.path.join(work, "cache-repair")))
    if result.returncode not in (0, 1):
        raise RuntimeError(result.stderr)
    seconds = time.perf_counter() - start
    import json
    report = json.load(open(os.path.join(work, "repair", "report.json")))["repair"]
    return len(report["kept_float32"]), report["runs"], seconds, out


def onnxconverter(source, inputs, work):
    from onnxconverter_common import auto_mixed_precision
    import onnxruntime  # noqa: F401  (the tool runs the model with it)
    model = onnx.load(source)
    with np.load(inputs) as archive:
        feed = {name.split("/", 1)[1]: archive[name] for name in archive.files
                if name.startswith("sample_0/")} or {name: archive[name] for name in archive.files}
    conversions = [0]

    def validate(expected, actual):
        conversions[0] += 1
        return all(np.allclose(e, a, rtol=1e-2, atol=4e-2) for e, a in zip(expected, actual))

    start = time.perf_counter()
    try:
        result = auto_mixed_precision.auto_convert_mixed_precision(model, feed, validate,
                                                                   keep_io_types=True)
    except Exception as error:  # it gives up by raising
        return None, conversions[0], time.perf_counter() - start, str(error)[:80]
    seconds = time.perf_counter() - start
    out = os.path.join(work, "onnxconverter.onnx")
    onnx.save(result, out)
    names = {node.name for node in model.graph.node}
    return float32_nodes(out, names), conversions[0], seconds, out


def autocast(source, inputs, work):
    import logging
    from modelopt.onnx.autocast import convert_to_mixed_precision
    logging.getLogger("modelopt").setLevel(logging.WARNING)
    with np.load(inputs) as archive:
        first = {name.split("/", 1)[1]: archive[name] for name in archive.files
                 if name.startswith("sample_0/")}
    calibration = os.path.join(work, "autocast-calibration.npz")
    np.savez(calibration, **first)
    start = time.perf_counter()
    try:
        result = convert_to_mixed_precision(source, low_precision_type="fp16", keep_io_types=True,
                                            calibration_data=calibration)
    except Exception as error:
        return None, 1, time.perf_counter() - start, str(error)[:80]
    seconds = time.perf_counter() - start
    out = os.path.join(work, "autocast.onnx")
    onnx.save(result, out)
    names = {node.name for node in onnx.load(source).graph.node}
    return float32_nodes(out, names), 1, seconds, out


def bisection(source, inputs, work):
    names = [node.name for node in onnx.load(source).graph.node if node.name]
    cache = os.path.join(work, "cache-bisect")
    conversions = 0
    start = time.perf_counter()
    lo, hi = 0, len(names)  # the prefix of hi nodes passes (all float32 does)
    while lo < hi:
        mid = (lo + hi) // 2
        out = os.path.join(work, "bisect.onnx")
        fp16_with(source, out, names[:mid], cache)
        conversions += 1
        if gate(source, out, inputs):
            hi = mid
        else:
            lo = mid + 1
    out = os.path.join(work, "bisected.onnx")
    fp16_with(source, out, names[:hi], cache)
    return hi, conversions + 1, time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--fixture", choices=("overflow", "underflow"), default="overflow")
    args = parser.parse_args()
    fixtures = run([os.path.join(ROOT, "scripts", "make_torch_fixtures.sh")]).stdout
    fixtures = fixtures.strip().splitlines()[-1]
    work = tempfile.mkdtemp(prefix="repair-peers-")
    source = os.path.join(work, args.fixture + ".onnx")
    factor = "1e5" if args.fixture == "overflow" else "1e-6"
    made = run([os.path.join(BUILD, "convgate-inject-fault"),
                os.path.join(fixtures, args.model + ".onnx"), source, "--fault", "fp16-overflow",
                "--factor", factor])
    if made.returncode != 0:
        sys.exit(made.stderr)
    rng = np.random.default_rng(1)
    inputs = os.path.join(work, "inputs.npz")
    np.savez(inputs, **{"sample_%d/input" % i: rng.random((1, 3, 224, 224), dtype=np.float32)
                        for i in range(args.samples)})
    plain = os.path.join(work, "plain.onnx")
    fp16_with(source, plain, [], os.path.join(work, "cache-plain"))
    print("%s with the %s fixture, %d samples; plain fp16 passes the gate: %s" %
          (args.model, args.fixture, args.samples, gate(source, plain, inputs)))
    print("%-22s %12s %12s %9s %s" % ("tool", "kept fp32", "conversions", "seconds",
                                       "passes the gate"))
    for name, tool in (("convgate repair", repair), ("onnxconverter-common", onnxconverter),
                       ("ModelOpt AutoCast", autocast), ("bisection", bisection)):
        kept, conversions, seconds, out = tool(source, inputs, work)
        passes = gate(source, out, inputs) if kept is not None else "gave up: " + out
        print("%-22s %12s %12d %9.1f %s" % (name, kept, conversions, seconds, passes))


if __name__ == "__main__":
    main()
