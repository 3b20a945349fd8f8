#!/usr/bin/env python3
"""Runs a model with OpenVINO for convgate's exec backend.

    convgate compare model.onnx model.xml \
        --target-exec 'python3 examples/exec/openvino_runner.py {model} --serve {inputs_dir} {outputs_dir}'

argv[1] is anything OpenVINO's Core.read_model reads (IR .xml with its .bin beside it, .onnx,
.tflite, a TF SavedModel folder, ...); then `--serve` and two folders (one process compiles the
model once and serves every sample), or an .npz with one sample's inputs and the .npz to write its
outputs to ({inputs} {outputs}: a process per sample). The protocol is exec_serve.py's. Inputs are matched to the model's by tensor name, or by position when no
name matches and the counts agree (convgate names them after the other side's model). Outputs are
written under the model's output tensor names, so a model converted from ONNX with its names kept
pairs with the ONNX model by name; otherwise convgate pairs outputs by position. The model is
compiled for the CPU plugin, as OpenVINO's verify-conversion gate does.

Inference precision is pinned to f32 (`--precision f32`, the default): the CPU plugin otherwise
computes at its default precision, bf16 on a CPU with AMX, and a faithful float32 conversion then
fails the gate on bf16's rounding alone. Pass `--precision bf16` (or f16) to gate that precision on
purpose. The runner prints the precision it ran at to stderr, which convgate keeps in the report
(the side's backend_log).

Needs OpenVINO (`pip install openvino`, 2023.1 or later for `import openvino as ov`); the project's
venv has it (scripts/setup.sh): run this with `$CONVGATE_VENV/bin/python`.
"""
import sys

import numpy as np
import openvino as ov

from exec_serve import RunnerError, main


def match_inputs(compiled, arrays):
    """The feed dict {port: array}, by tensor name or else by position."""
    by_name = {}
    for port in compiled.inputs:
        found = [name for name in port.get_names() if name in arrays]
        if found:
            by_name[port] = arrays[found[0]]
    if len(by_name) == len(compiled.inputs):
        return by_name
    if len(arrays) == len(compiled.inputs):
        return {port: array for port, array in zip(compiled.inputs, arrays.values())}
    wanted = [port.get_any_name() for port in compiled.inputs]
    raise RunnerError(f"openvino_runner: the model takes {wanted}, the inputs hold {list(arrays)}")


def split_precision(args):
    """(args without `--precision P`, P), or None when the option has no value."""
    args = list(args)
    precision = "f32"
    if "--precision" in args:
        at = args.index("--precision")
        if at + 1 >= len(args):
            return None
        precision = args[at + 1]
        del args[at:at + 2]
    return args, precision


def loader(precision):
    def load(model_path):
        core = ov.Core()
        compiled = core.compile_model(core.read_model(model_path), "CPU",
                                      {"INFERENCE_PRECISION_HINT": precision})
        ran_at = compiled.get_property("INFERENCE_PRECISION_HINT")
        print(f"openvino_runner: OpenVINO {ov.get_version()} CPU, inference precision "
              f"{getattr(ran_at, 'get_type_name', lambda: ran_at)()}", file=sys.stderr)
        return compiled
    return load


def run(compiled, arrays):
    request = compiled.create_infer_request()
    results = request.infer(match_inputs(compiled, arrays))
    outputs = {}
    for index, port in enumerate(compiled.outputs):
        # An output without a tensor name gets numpy's positional name; convgate then pairs it
        # by position.
        name = port.get_any_name() if port.get_names() else f"arr_{index}"
        outputs[name] = np.asarray(results[port])
    return outputs


USAGE = ("usage: openvino_runner.py MODEL INPUTS.npz OUTPUTS.npz [--precision f32|f16|bf16]\n"
         "       openvino_runner.py MODEL --serve INPUTS_DIR OUTPUTS_DIR [--precision ...]")

if __name__ == "__main__":
    split = split_precision(sys.argv[1:])
    if split is None:
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(split[0], loader(split[1]), run, USAGE))
