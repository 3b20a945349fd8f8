#!/usr/bin/python3
"""Exports a PyTorch model to TorchScript and/or ONNX, deterministically for a given seed.

Run with Debian's python (/usr/bin/python3: python3-torch, python3-torchvision).

  torch_export.py --model resnet18 --to-torchscript r18.pt --to-onnx r18.onnx --dynamic-batch
  torch_export.py --from-torchscript model.pt --to-onnx model.onnx --input-shape 1x3x224x224

--model takes any torchvision.models name. Its weights are random (seeded) and so are its
BatchNorm statistics and affine parameters: with weights=None every BatchNorm is neutral (mean 0,
var 1, weight 1, bias 0), the ONNX exporter folds it away to nothing, and deep networks such as
mobilenet_v2 produce outputs around 1e-9, which no tolerance can judge (docs/architecture.md, Pitfalls).
Random statistics alone are not enough either: they do not normalize, and mobilenet_v2's output
then no longer depends on its input. So the statistics are first calibrated on seeded random
inputs (one training-mode forward pass), then every BatchNorm parameter is randomized around them.

--from-torchscript converts an existing TorchScript file (the PyTorch -> ONNX conversion behind
`convgate convert model.pt --to onnx`). Input names default to forward()'s argument names, so
convgate matches the two files' inputs by name.

--from-exported-program converts a torch.export program (.pt2, `convgate convert model.pt2 --to
onnx`) with torch.onnx.export(dynamo=True), which needs a current torch and onnxscript: run it with
the project's venv python, not Debian's (whose torch 1.13 predates torch.export). The ONNX inputs
carry the program's user input names and its dynamic dims stay symbolic.

The TorchScript file's forward() takes arguments named by --input-names (the model is wrapped), so
`convgate compare model.pt model.onnx` sees the same input names on both sides.

Prints one JSON line on stdout describing what was done (versions, opset, files with sha256).
Exit codes: 0 exported, 1 the export failed (message on stderr naming the model), 2 usage.
"""

import argparse
import hashlib
import json
import keyword
import os
import shutil
import sys
import tempfile
import time

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# The ONNX opsets torch.onnx in Debian 12's python3-torch 1.13 can write (its
# torch.onnx._constants ONNX_MIN_OPSET / ONNX_MAX_OPSET); 13 and 17 are the ones tested here.
MIN_OPSET, MAX_OPSET = 7, 17
# Samples that set the BatchNorm statistics: at 224x224 the last layers still see 8 * 7 * 7 = 392
# values per channel.
CALIBRATION_BATCH = 8
DEFAULT_SHAPE = "1x3x224x224"


class UsageError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="torch_export.py",
        description="Export a torchvision architecture (seeded random weights and BatchNorm "
        "statistics) or a TorchScript file to TorchScript and/or ONNX.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a torchvision.models architecture name, e.g. resnet18")
    source.add_argument("--from-torchscript", metavar="FILE.pt", help="a TorchScript file")
    source.add_argument("--from-exported-program", metavar="FILE.pt2",
                        help="a torch.export program (torch.export.save), exported with "
                        "torch.onnx.export(dynamo=True)")
    parser.add_argument("--to-torchscript", metavar="OUT.pt", help="write TorchScript (--model)")
    parser.add_argument("--to-onnx", metavar="OUT.onnx", help="write ONNX")
    parser.add_argument("--opset", type=int, help="ONNX opset (default 17; for "
                        "--from-exported-program, torch's default)")
    parser.add_argument("--input-shape", action="append", metavar="DxDx...",
                        help="shape of one input, in order; repeat per input "
                        "(default 1x3x224x224)")
    parser.add_argument("--input-dtype", action="append", metavar="DTYPE",
                        help="dtype of one input, in order (default float32)")
    parser.add_argument("--input-names", help="comma-separated input names "
                        "(default: 'input' for --model; forward()'s argument names otherwise)")
    parser.add_argument("--output-names", help="comma-separated output names "
                        "(default 'output', or output_0, output_1, ... for several)")
    parser.add_argument("--dynamic-batch", action="store_true",
                        help="make dim 0 of every ONNX input and output the symbol 'batch'")
    parser.add_argument("--seed", type=int, default=0, help="weights and example input (default 0)")
    parser.add_argument("--keep-batchnorm", action="store_true",
                        help="keep BatchNormalization nodes (the exporter's eval-mode peephole "
                        "otherwise folds them into the preceding Conv)")
    args = parser.parse_args(argv)
    args.opset_given = args.opset is not None
    if args.opset is None:
        args.opset = 17
    if not args.to_torchscript and not args.to_onnx:
        parser.error("nothing to do: give --to-torchscript and/or --to-onnx")
    if (args.from_torchscript or args.from_exported_program) and args.to_torchscript:
        parser.error("--to-torchscript needs --model")
    if args.from_exported_program:
        for flag in ("input_shape", "input_dtype", "input_names", "output_names"):
            if getattr(args, flag):
                parser.error(f"--{flag.replace('_', '-')}: a torch.export program carries its "
                             "own inputs and outputs")
        if args.dynamic_batch or args.keep_batchnorm:
            parser.error("--dynamic-batch and --keep-batchnorm apply to TorchScript sources: a "
                         "torch.export program carries its own dynamic dims")
        args.opset = args.opset if args.opset_given else None
    elif not MIN_OPSET <= args.opset <= MAX_OPSET:
        parser.error(f"--opset {args.opset}: torch {torch_version()} exports opsets "
                     f"{MIN_OPSET} to {MAX_OPSET}")
    return args


def torch_version():
    import torch
    return torch.__version__


def parse_shape(text):
    try:
        dims = [int(dim) for dim in text.lower().split("x")]
    except ValueError:
        raise UsageError(f"--input-shape '{text}': expected dims joined by x, e.g. 1x3x224x224")
    if any(dim < 1 for dim in dims):
        raise UsageError(f"--input-shape '{text}': every dim must be at least 1")
    return dims


def split_names(text):
    return [name.strip() for name in text.split(",")] if text else None


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_atomically(path, write):
    """Calls write(tmp_path), then renames tmp_path to path: no half-written file at `path`.

    The temporary file has the final file's name, inside a temporary folder beside it: a
    TorchScript archive records its file name (its zip members live under "<stem>/"), so a random
    temporary name would make the same model give different bytes.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".staging-", dir=directory)
    tmp = os.path.join(staging, os.path.basename(path))
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def batchnorms(model):
    import torch
    return [module for module in model.modules()
            if isinstance(module, torch.nn.modules.batchnorm._BatchNorm)]


def calibrate_batchnorm(model, shape, generator):
    """Running statistics from the model's own activations on seeded uniform [0, 1) inputs.

    Random statistics that ignore the activations do not normalize them: measured here,
    mobilenet_v2's logits then moved by 2e-7 of their spread between two different inputs (the
    network had forgotten its input) and resnet18's by 4%. Calibrated, both respond fully.
    """
    import torch
    layers = batchnorms(model)
    for layer in layers:
        layer.reset_running_stats()
        layer.momentum = None  # a cumulative average over the calibration batch
    model.train()
    batch = [CALIBRATION_BATCH] + list(shape[1:])
    # One thread: parallel reductions sum in an order that depends on the thread count, and the
    # statistics (hence the exported bytes) must not.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            model(torch.rand(batch, generator=generator))
    finally:
        torch.set_num_threads(threads)
    for layer in layers:
        layer.momentum = 0.1  # PyTorch's default, as a trained model would carry it
    model.eval()


def randomize_batchnorm(model, generator):
    """Seeded BatchNorm parameters around the calibrated (or neutral) ones.

    Statistics: var scaled by [0.75, 1.25), mean shifted by up to 0.1 standard deviations;
    affine: weight in [0.75, 1.25), bias in [-0.1, 0.1). Every BatchNorm thereby differs from
    the identity, so folding it into the preceding Conv changes every weight (a wrong fold shows),
    while activations stay of order 1 through 50 layers.
    """
    import torch
    for module in batchnorms(model):
        n = module.num_features
        with torch.no_grad():
            std = module.running_var.sqrt()
            module.running_mean.add_((torch.rand(n, generator=generator) - 0.5) * 0.2 * std)
            module.running_var.mul_(torch.rand(n, generator=generator) * 0.5 + 0.75)
            if module.affine:
                module.weight.copy_(torch.rand(n, generator=generator) * 0.5 + 0.75)
                module.bias.copy_((torch.rand(n, generator=generator) - 0.5) * 0.2)


def named_forward(module, input_names):
    """Wraps `module` so that forward()'s arguments carry `input_names` (TorchScript keeps them)."""
    import torch
    for name in input_names:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"--input-names: '{name}' is not a Python identifier, and the "
                             "TorchScript forward() argument must be one")
    params = ", ".join(input_names)
    namespace = {}
    exec(f"def forward(self, {params}):\n    return self.model({params})\n", namespace)
    wrapper_class = type("Model", (torch.nn.Module,), {"forward": namespace["forward"]})
    wrapper = wrapper_class()
    wrapper.model = module
    return wrapper.eval()


def torchvision_model(name, shape, seed):
    import torch
    import torchvision
    if name not in torchvision.models.list_models():
        raise UsageError(f"--model '{name}' is not a torchvision {torchvision.__version__} "
                         "architecture (torchvision.models.list_models() has them)")
    torch.manual_seed(seed)  # torchvision initializes weights from the global generator
    model = torchvision.models.get_model(name, weights=None)
    generator = torch.Generator().manual_seed(seed + 1)
    calibrate_batchnorm(model, shape, generator)
    randomize_batchnorm(model, generator)
    return model.eval()


def forward_argument_names(scripted):
    schema = scripted._c._get_method("forward").schema
    return [arg.name for arg in schema.arguments[1:]]  # arguments[0] is self


def example_inputs(shapes, dtypes, seed):
    import torch
    generator = torch.Generator().manual_seed(seed)
    inputs = []
    for shape, dtype_name in zip(shapes, dtypes):
        dtype = getattr(torch, dtype_name, None)
        if not isinstance(dtype, torch.dtype):
            raise UsageError(f"--input-dtype '{dtype_name}' is not a torch dtype")
        if dtype.is_floating_point:
            inputs.append(torch.rand(shape, generator=generator).to(dtype))
        elif dtype == torch.bool:
            inputs.append(torch.rand(shape, generator=generator) < 0.5)
        else:
            inputs.append(torch.randint(0, 2, shape, generator=generator, dtype=dtype))
    return tuple(inputs)


def count_outputs(value):
    if isinstance(value, (tuple, list)):
        return sum(count_outputs(item) for item in value)
    if isinstance(value, dict):
        return sum(count_outputs(item) for item in value.values())
    return 1


def default_output_names(count):
    return ["output"] if count == 1 else [f"output_{idx}" for idx in range(count)]


def export_onnx(model, inputs, path, args, input_names, output_names):
    import torch
    dynamic_axes = None
    if args.dynamic_batch:
        dynamic_axes = {name: {0: "batch"} for name in input_names + output_names}
    # TrainingMode.PRESERVE exports the module as it is (in eval mode: inference BatchNorm) but
    # skips the EVAL-only peephole pass that fuses Conv + BatchNorm.
    training = torch.onnx.TrainingMode.PRESERVE if args.keep_batchnorm else torch.onnx.TrainingMode.EVAL
    write_atomically(path, lambda tmp: torch.onnx.export(
        model, inputs, tmp, opset_version=args.opset, input_names=input_names,
        output_names=output_names, dynamic_axes=dynamic_axes,
        do_constant_folding=not args.keep_batchnorm, training=training))


def resolve_inputs(args, default_names):
    names = split_names(args.input_names) or default_names
    shapes = [parse_shape(text) for text in (args.input_shape or [DEFAULT_SHAPE])]
    if len(shapes) != len(names):
        raise UsageError(f"{len(names)} input(s) ({', '.join(names)}) but {len(shapes)} "
                         "--input-shape(s): give one per input, in order")
    dtypes = args.input_dtype or ["float32"] * len(names)
    if len(dtypes) != len(names):
        raise UsageError(f"{len(names)} input(s) but {len(dtypes)} --input-dtype(s)")
    return names, shapes, dtypes


def load_model(args):
    """Returns (the module to trace or export, its default input names)."""
    import torch
    if args.model:
        names = split_names(args.input_names) or ["input"]
        shape = parse_shape((args.input_shape or [DEFAULT_SHAPE])[0])
        return named_forward(torchvision_model(args.model, shape, args.seed), names), names
    if not os.path.isfile(args.from_torchscript):
        raise FileNotFoundError(f"{args.from_torchscript}: no such file")
    scripted = torch.jit.load(args.from_torchscript, map_location="cpu").eval()
    return scripted, forward_argument_names(scripted)


def export_program(args):
    """torch.onnx.export(dynamo=True) of a .pt2: the program's graph, its names and symbolic dims."""
    import torch
    if not os.path.isfile(args.from_exported_program):
        raise FileNotFoundError(f"{args.from_exported_program}: no such file")
    program = torch.export.load(args.from_exported_program)
    # The exporter prints its progress ("[torch.onnx] Obtain model graph ...") on stdout, where
    # the record must be the last line; it goes to stderr with the rest of the log.
    import contextlib
    with contextlib.redirect_stdout(sys.stderr):
        write_atomically(args.to_onnx, lambda tmp: torch.onnx.export(
            program, f=tmp, dynamo=True, opset_version=args.opset, external_data=False))
    import onnx
    # The venv's checker knows the IR and opset the exporter writes (convgate's libonnx is older).
    try:
        onnx.checker.check_model(args.to_onnx)
    except onnx.checker.ValidationError as error:
        os.remove(args.to_onnx)
        raise RuntimeError(f"the exported ONNX fails onnx {onnx.__version__}'s checker: {error}")
    model = onnx.load(args.to_onnx, load_external_data=False)
    opset = next((entry.version for entry in model.opset_import if entry.domain in ("", "ai.onnx")),
                 None)
    args.opset = opset
    return {"input_names": [value.name for value in model.graph.input],
            "output_names": [value.name for value in model.graph.output],
            "files": [{"kind": "onnx", "path": args.to_onnx,
                       "sha256": sha256_of(args.to_onnx)}]}


def export(args):
    import torch
    if args.from_exported_program:
        return export_program(args)
    module, default_names = load_model(args)
    input_names, shapes, dtypes = resolve_inputs(args, default_names)
    inputs = example_inputs(shapes, dtypes, args.seed)
    with torch.no_grad():
        count = count_outputs(module(*inputs))
    output_names = split_names(args.output_names) or default_output_names(count)
    files = []
    if args.to_torchscript:
        traced = torch.jit.trace(module, inputs)
        write_atomically(args.to_torchscript, lambda tmp: torch.jit.save(traced, tmp))
        files.append({"kind": "torchscript", "path": args.to_torchscript})
    if args.to_onnx:
        export_onnx(module, inputs, args.to_onnx, args, input_names, output_names)
        files.append({"kind": "onnx", "path": args.to_onnx})
    for entry in files:
        entry["sha256"] = sha256_of(entry["path"])
    return {"input_names": input_names, "input_shapes": shapes, "input_dtypes": dtypes,
            "output_names": output_names, "files": files}


def describe_failure(error):
    """The error, its root cause first. The dynamo exporter wraps the cause (e.g. "AssertionError:
    only 4D query, key, and value are supported") in two layers of advice and a stack summary; the
    cause, then the node it was translating, is what a user acts on."""
    chain = [error]
    while chain[-1].__cause__ is not None and len(chain) < 8:
        chain.append(chain[-1].__cause__)
    if len(chain) == 1:
        return f"{type(error).__name__}: {error}"

    def first_line(exc):
        text = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {text[0] if text else ''}"[:400]
    return "; ".join(first_line(exc) for exc in reversed(chain))


def main(argv):
    args = parse_args(argv)
    model = args.model or args.from_torchscript or args.from_exported_program
    start = time.monotonic()
    try:
        import torch
        torch.set_grad_enabled(False)
        result = export(args)
    except UsageError as error:
        print(f"torch_export.py: {error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:  # the export itself failed: name the model, keep torch's words
        print(f"torch_export.py: exporting {model} failed: {describe_failure(error)}",
              file=sys.stderr)
        return EXIT_FAILED
    source = ("torchvision" if args.model else
              "exported_program" if args.from_exported_program else "torchscript")
    record = {"model": model, "source": source, "torch_version": torch.__version__,
              "opset": args.opset if args.to_onnx else None, "seed": args.seed,
              "randomized_batchnorm": bool(args.model), "dynamic_batch": args.dynamic_batch}
    if args.from_exported_program:
        import onnxscript
        record["onnxscript_version"] = onnxscript.__version__
    else:
        import torchvision
        record["torchvision_version"] = torchvision.__version__
    record.update(result)
    record["seconds"] = round(time.monotonic() - start, 3)
    print(json.dumps(record))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
