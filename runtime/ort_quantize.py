#!/usr/bin/env python3
"""Quantizes an ONNX model to int8 with ONNX Runtime's quantization tools (onnxruntime.quantization,
the venv's pinned onnxruntime): `convgate convert --to int8-dynamic|int8-static`.

  ort_quantize.py --mode dynamic SRC.onnx OUT.onnx [--weight-type qint8|quint8] [--per-channel]
  ort_quantize.py --mode static SRC.onnx OUT.onnx --calibration inputs.npz [--format qdq|qoperator]

dynamic: weights quantized ahead, activations at run time (quantize_dynamic), the usual choice for
transformers and MLPs. static: weights and activations, with activation ranges calibrated on the
samples of --calibration (an .npz as convgate writes it: flat for one sample, sample_<i>/<input> for
several; the gate's own inputs, or --data's), in QDQ form by default (quantize_static).
--op-types limits quantization to those ops (comma-separated). Run with the project's venv python.

Prints one JSON line on stdout: the tool versions, the mode and what was quantized.
Exit codes: 0 quantized, 1 the quantization failed (message on stderr), 2 usage.
"""

import argparse
import json
import os
import re
import sys

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="ort_quantize.py")
    parser.add_argument("--mode", choices=("dynamic", "static"), required=True)
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--weight-type", choices=("qint8", "quint8"), default="qint8")
    parser.add_argument("--per-channel", action="store_true")
    parser.add_argument("--op-types", default="")
    parser.add_argument("--nodes-to-exclude", default="")
    parser.add_argument("--calibration", default="")
    parser.add_argument("--format", choices=("qdq", "qoperator"), default="qdq")
    parser.add_argument("--calibrate-method", choices=("minmax", "entropy", "percentile"),
                        default="minmax")
    return parser.parse_args(argv)


def calibration_samples(path):
    """The samples of a convgate .npz: [{input: array}, ...]."""
    import numpy as np

    with np.load(path) as archive:
        members = {name: archive[name] for name in archive.files}
    pattern = re.compile(r"^sample_(\d+)/(.+)$")
    if members and all(pattern.match(name) for name in members):
        samples = {}
        for name, array in members.items():
            index, key = pattern.match(name).groups()
            samples.setdefault(int(index), {})[key] = array
        return [samples[i] for i in sorted(samples)]
    return [members]


class NpzReader:
    """onnxruntime.quantization's CalibrationDataReader over convgate's samples."""

    def __init__(self, samples):
        self.samples = iter(samples)

    def get_next(self):
        return next(self.samples, None)


def main(argv):
    args = parse_args(argv)
    import onnxruntime
    from onnxruntime import quantization as q

    if not os.path.isfile(args.source):
        print("ort_quantize.py: no such model: %s" % args.source, file=sys.stderr)
        return EXIT_USAGE
    import onnx

    record_extra = {}
    source = args.source
    structure = onnx.load(args.source, load_external_data=False)
    # A source whose weights are external data (every model over protobuf's 2 GB) is quantized
    # into "<out>.data" beside the output, which the driver keeps with it.
    external = any(t.data_location == onnx.TensorProto.EXTERNAL
                   for t in structure.graph.initializer)
    if not external:
        moved = constants_to_initializers(structure)
        if moved:
            # The quantizer reads weights only from initializers (paddle2onnx stores each in a
            # Constant node): the same values, moved, in a scratch model beside the output.
            source = args.out + ".constants.onnx"
            onnx.save(structure, source)
            record_extra["constants_to_initializers"] = moved
    del structure
    try:
        return quantize(args, q, onnxruntime, source, external, record_extra)
    finally:
        if source != args.source and os.path.exists(source):
            os.remove(source)


def constants_to_initializers(model):
    """Moves main-graph Constant nodes holding a tensor into initializers; returns how many."""
    import onnx

    kept = []
    moved = 0
    for node in model.graph.node:
        if (node.op_type == "Constant" and node.domain in ("", "ai.onnx")
                and len(node.attribute) == 1 and node.attribute[0].name == "value"):
            tensor = onnx.TensorProto()
            tensor.CopyFrom(node.attribute[0].t)
            tensor.name = node.output[0]
            model.graph.initializer.append(tensor)
            moved += 1
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    return moved


def quantize(args, q, onnxruntime, source, external, record_extra):
    import onnx

    weight_type = q.QuantType.QInt8 if args.weight_type == "qint8" else q.QuantType.QUInt8
    op_types = [op for op in args.op_types.split(",") if op] or None
    excluded = [name for name in args.nodes_to_exclude.split(",") if name]
    if excluded:
        # ONNX Runtime ignores a name no node has; a misspelt block list would quantize silently.
        names = {node.name for node in onnx.load(source, load_external_data=False).graph.node}
        unknown = [name for name in excluded if name not in names]
        if unknown:
            print("ort_quantize.py: node_block_list names no node of the model: %s"
                  % ", ".join(unknown), file=sys.stderr)
            return EXIT_USAGE
        record_extra = dict(record_extra, nodes_excluded=len(excluded))
    record = {"onnxruntime_version": onnxruntime.__version__, "mode": args.mode,
              "weight_type": args.weight_type, "per_channel": args.per_channel}
    record.update(record_extra)
    if args.mode == "dynamic":
        q.quantize_dynamic(source, args.out, weight_type=weight_type,
                           per_channel=args.per_channel, op_types_to_quantize=op_types,
                           nodes_to_exclude=excluded, use_external_data_format=external)
    else:
        if not args.calibration:
            print("ort_quantize.py: --mode static needs --calibration inputs.npz", file=sys.stderr)
            return EXIT_USAGE
        samples = calibration_samples(args.calibration)
        record["calibration_samples"] = len(samples)
        method = {"minmax": q.CalibrationMethod.MinMax, "entropy": q.CalibrationMethod.Entropy,
                  "percentile": q.CalibrationMethod.Percentile}[args.calibrate_method]
        q.quantize_static(source, args.out, NpzReader(samples),
                          quant_format=q.QuantFormat.QDQ if args.format == "qdq"
                          else q.QuantFormat.QOperator,
                          weight_type=weight_type, activation_type=q.QuantType.QInt8
                          if args.weight_type == "qint8" else q.QuantType.QUInt8,
                          per_channel=args.per_channel, op_types_to_quantize=op_types,
                          nodes_to_exclude=excluded, calibrate_method=method,
                          use_external_data_format=external)
        record["format"] = args.format
    model = onnx.load(args.out, load_external_data=False)
    ops = {}
    for node in model.graph.node:
        ops[node.op_type] = ops.get(node.op_type, 0) + 1
    record["quantized_ops"] = {op: n for op, n in sorted(ops.items())
                               if op.startswith(("QLinear", "DynamicQuantize", "MatMulInteger",
                                                 "ConvInteger", "QuantizeLinear",
                                                 "DequantizeLinear"))}
    print(json.dumps(record))
    return EXIT_OK


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except SystemExit:
        raise
    except Exception as error:  # the message names the model; the exit code says it failed
        print("ort_quantize.py: %s: %s" % (type(error).__name__, error), file=sys.stderr)
        sys.exit(EXIT_FAILED)
