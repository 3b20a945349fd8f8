#!/usr/bin/env python3
"""Conversions to OpenVINO and Hugging Face exports, run by convgate with the project's venv.

Run with the python of the venv scripts/setup.sh creates (openvino, optimum, optimum-intel,
optimum-onnx, transformers, torch: scripts/python-requirements.txt).

  openvino_export.py native --source model.onnx --out model.xml [--fp16]
                     [--int8 --calibration samples.npz [--preset performance|mixed]
                      [--ignored-nodes a,b]]
                     [--input-names a,b] [--input-shape 1x3x224x224 ...] [--input-dtype float32 ...]
  openvino_export.py optimum --exporter openvino --model DIR --out OUT_DIR --task TASK
                     [--weight-format fp16|int8|int4] [--group-size N]
  openvino_export.py optimum --exporter onnx --model DIR --out OUT_DIR --task TASK

native: the verify-conversion seed's Path B. An ONNX file or a TorchScript file (.pt, .pth, .ts)
goes through openvino.convert_model and openvino.save_model (IR: OUT.xml with OUT.bin beside it;
float weights stay float32 unless --fp16; --int8 quantizes weights and activations with NNCF's
post-training quantization, nncf.quantize, calibrated on the samples of a convgate .npz); a
TensorFlow SavedModel folder goes through `ovc`; a
Hugging Face model folder of a task that does not generate (classification, fill-mask, ...) is
loaded by transformers and traced by convert_model on the inputs convgate's hf backend makes.
A TorchScript model's IR inputs are named after forward()'s arguments (or --input-names) instead
of TorchScript's debug names (`x.1`); with --input-shape (one per input, in order) and
--input-dtype, convert_model gets them as `input` and an example input, so the IR is static.

optimum: Path A. A Hugging Face model folder (config.json + weights) goes through
`optimum-cli export openvino|onnx --task TASK`: this process becomes optimum-cli (os.execv: the
same pid, so convgate's timeout and an OOM kill reach the exporter itself, and its stderr is
optimum's own). convgate resolves the task (graph::ResolveHfTask, the one rule verify reports too).

Fault injection for tests: CONVGATE_INJECT_EXPORT_OOM=FORMAT[,FORMAT] makes an optimum export with
that --weight-format print a MemoryError and kill itself with SIGKILL, as the OOM killer would;
CONVGATE_INJECT_EXPORT_HANG=FORMAT[,FORMAT] makes it sleep instead (an hour, using no CPU), as an export
deadlocked in a futex wait does, for convgate's hang detection to find;
CONVGATE_INJECT_EXPORT_PERTURB=FORMAT[,FORMAT] exports a copy of the model whose floating weights got
30% noise (tests/hf/perturb_hf_model.py), a wrong conversion for the gate to fail.

Before exec'ing (optimum) or after exporting (native), prints one JSON line on stdout (and into
--record FILE): versions, the task, the command. Exit codes: 0 exported, 1 the export failed (the
exporter's message on stderr), 2 usage.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# transformers imports TensorFlow whenever it is installed (the venv has tensorflow-cpu for ovc's
# SavedModel path), and TensorFlow brings h5py, whose at-fork handler deadlocks against Python's
# import lock when a thread forks while another imports: an optimum-cli export of gpt2 hung so,
# idle until the conversion timeout, in two full test runs. Every model these tools load is
# PyTorch, so transformers is told not to look for TensorFlow (children inherit it).
os.environ.setdefault("USE_TF", "0")

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

WEIGHT_FORMATS = ("fp16", "int8", "int4")
TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".torchscript")
EXPORTED_PROGRAM_SUFFIX = ".pt2"  # torch.export.save
INJECT_OOM_ENV = "CONVGATE_INJECT_EXPORT_OOM"
INJECT_HANG_ENV = "CONVGATE_INJECT_EXPORT_HANG"
INJECT_PERTURB_ENV = "CONVGATE_INJECT_EXPORT_PERTURB"


class UsageError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="openvino_export.py",
                                     description="Conversions to OpenVINO and Hugging Face exports.")
    sub = parser.add_subparsers(dest="command", required=True)
    native = sub.add_parser("native", help="ONNX / TorchScript / SavedModel -> OpenVINO IR")
    native.add_argument("--source", required=True)
    native.add_argument("--out", required=True, metavar="OUT.xml")
    native.add_argument("--fp16", action="store_true", help="compress weights to float16")
    native.add_argument("--int8", action="store_true",
                        help="NNCF post-training int8 quantization (needs --calibration)")
    native.add_argument("--calibration", metavar="SAMPLES.npz",
                        help="--int8: the samples activation ranges are calibrated on")
    native.add_argument("--preset", choices=("performance", "mixed"), default="performance",
                        help="--int8: NNCF's preset (mixed: asymmetric activations)")
    native.add_argument("--ignored-nodes", default="",
                        help="--int8: node names left in float32 (NNCF's IgnoredScope)")
    native.add_argument("--input-names", help="TorchScript: comma-separated names of the IR's "
                        "inputs (default: forward()'s argument names)")
    native.add_argument("--input-shape", action="append", metavar="DxDx...",
                        help="TorchScript: static shape of one input, in order; repeat per input")
    native.add_argument("--input-dtype", action="append", metavar="DTYPE",
                        help="TorchScript: dtype of one input, in order (default float32)")
    native.add_argument("--record", metavar="FILE.json", help="also write the JSON record here")
    optimum = sub.add_parser("optimum", help="a Hugging Face model folder through optimum-cli")
    optimum.add_argument("--exporter", required=True, choices=("openvino", "onnx"))
    optimum.add_argument("--model", required=True, metavar="DIR")
    optimum.add_argument("--out", required=True, metavar="OUT_DIR")
    optimum.add_argument("--task", required=True, help="optimum's task, e.g. fill-mask")
    optimum.add_argument("--weight-format", default="fp16", choices=WEIGHT_FORMATS)
    optimum.add_argument("--group-size", type=int, help="int4 group size (optimum's default 128)")
    optimum.add_argument("--record", metavar="FILE.json", help="also write the JSON record here")
    return parser.parse_args(argv)


def versions(*packages):
    import importlib.metadata as metadata
    found = {}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    return found


def write_ir_atomically(out, write):
    """write(tmp_xml) saves an IR in a staging folder beside `out`; the .bin moves first, so
    OUT.xml never names weights that are not there yet."""
    directory = os.path.dirname(os.path.abspath(out))
    os.makedirs(directory, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".staging-", dir=directory)
    try:
        tmp = os.path.join(staging, os.path.basename(out))
        write(tmp)
        stem = os.path.splitext(out)[0]
        os.replace(os.path.splitext(tmp)[0] + ".bin", stem + ".bin")
        os.replace(tmp, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def emit_record(record, path):
    """The record on stdout, and in `path` when given: optimum-cli's own output follows it on
    stdout, so a caller reading only the tail of stdout finds it in the file."""
    text = json.dumps(record)
    print(text, flush=True)
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text + "\n")


def is_saved_model(path):
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "saved_model.pb"))


def convert_native(args):
    import openvino as ov
    source = args.source
    if not os.path.exists(source):
        raise UsageError(f"{source}: no such file or folder")
    if not args.out.endswith(".xml"):
        raise UsageError(f"--out {args.out}: an OpenVINO IR is written as OUT.xml (+ OUT.bin)")
    if is_saved_model(source):
        ovc = os.path.join(os.path.dirname(sys.executable), "ovc")
        def run_ovc(tmp):
            import subprocess
            command = [ovc, source, "--output_model", tmp,
                       f"--compress_to_fp16={'True' if args.fp16 else 'False'}"]
            done = subprocess.run(command, stdout=sys.stderr)
            if done.returncode != 0:
                raise RuntimeError(f"ovc exited with code {done.returncode}")
        write_ir_atomically(args.out, run_ovc)
        return "ovc"
    if os.path.isfile(os.path.join(source, "config.json")):
        model = convert_transformers(ov, source)
        write_ir_atomically(args.out,
                            lambda tmp: ov.save_model(model, tmp, compress_to_fp16=args.fp16))
        return "convert_model (transformers)"
    if os.path.isdir(source):
        raise UsageError(f"{source} is a folder but neither a TensorFlow SavedModel (no "
                         "saved_model.pb) nor a Hugging Face model folder (no config.json)")
    if source.endswith(TORCHSCRIPT_SUFFIXES):
        model = convert_torchscript(ov, source, args)
        path = "convert_model (TorchScript)"
    elif source.endswith(EXPORTED_PROGRAM_SUFFIX):
        model = convert_exported_program(ov, source)
        path = "convert_model (torch.export)"
    else:
        model = ov.convert_model(source)  # ONNX, or any format OpenVINO's frontends read
        path = "convert_model"
    if args.int8:
        model = quantize_int8(model, args)
        path += " + nncf.quantize"
    write_ir_atomically(args.out,
                        lambda tmp: ov.save_model(model, tmp, compress_to_fp16=args.fp16))
    return path


def quantize_int8(model, args):
    """NNCF's post-training quantization of an OpenVINO model: FakeQuantize on weights and
    activations, activation ranges from the calibration samples (every one of them)."""
    if not args.calibration:
        raise UsageError("--int8 calibrates activation ranges on samples: give --calibration")
    import nncf
    from ort_quantize import calibration_samples  # the one reader of convgate's .npz samples

    samples = calibration_samples(args.calibration)
    # A port may carry several tensor names (OpenVINO folds x + c - c into x, and x's port is
    # named 'back' too): the one the samples use.
    names = [next((name for name in sorted(port.get_names()) if name in samples[0]),
                  port.get_any_name()) for port in model.inputs]
    missing = [name for name in names if name not in samples[0]]
    if missing:
        raise UsageError(f"--calibration {args.calibration} has no input {', '.join(missing)} "
                         f"(the model's inputs: {', '.join(names)})")
    ignored = [name for name in args.ignored_nodes.split(",") if name]
    scope = nncf.IgnoredScope(names=ignored, validate=True) if ignored else None
    preset = (nncf.QuantizationPreset.MIXED if args.preset == "mixed"
              else nncf.QuantizationPreset.PERFORMANCE)
    dataset = nncf.Dataset(samples, lambda sample: {name: sample[name] for name in names})
    args.calibration_count = len(samples)
    kwargs = {"subset_size": len(samples), "preset": preset}
    if scope is not None:
        kwargs["ignored_scope"] = scope
    return nncf.quantize(model, dataset, **kwargs)


def parse_shape(text):
    try:
        dims = [int(dim) for dim in text.lower().split("x")]
    except ValueError:
        raise UsageError(f"--input-shape '{text}': expected dims joined by x, e.g. 1x3x224x224")
    if any(dim < 1 for dim in dims):
        raise UsageError(f"--input-shape '{text}': every dim must be at least 1")
    return dims


def convert_torchscript(ov, source, args):
    """convert_model of a TorchScript file, its inputs named after forward()'s arguments (a
    positional match: the IR keeps forward()'s order) and, given shapes, static."""
    import torch
    scripted = torch.jit.load(source, map_location="cpu").eval()
    forward_names = [arg.name for arg in
                     scripted._c._get_method("forward").schema.arguments[1:]]  # [0] is self
    names = [n.strip() for n in args.input_names.split(",")] if args.input_names else forward_names
    if len(names) != len(forward_names):
        raise UsageError(f"--input-names {args.input_names}: forward() of {source} takes "
                         f"{len(forward_names)} argument(s) ({', '.join(forward_names)})")
    shapes = [parse_shape(text) for text in args.input_shape or []]
    dtypes = args.input_dtype or ["float32"] * len(shapes)
    if shapes and len(shapes) != len(names):
        raise UsageError(f"{len(names)} input(s) ({', '.join(names)}) but {len(shapes)} "
                         "--input-shape(s): give one per input, in order")
    if len(dtypes) != len(shapes):
        raise UsageError(f"{len(shapes)} --input-shape(s) but {len(dtypes)} --input-dtype(s)")
    if shapes:
        example = tuple(torch.zeros(shape, dtype=getattr(torch, dtype))
                        for shape, dtype in zip(shapes, dtypes))
        inputs = [(ov.PartialShape(shape), getattr(ov.Type, dtype_name(dtype)))
                  for shape, dtype in zip(shapes, dtypes)]
        model = ov.convert_model(scripted, example_input=example, input=inputs)
    else:
        model = ov.convert_model(scripted)
    return name_inputs(model, names, "forward()")


def convert_exported_program(ov, source):
    """convert_model of a torch.export program (.pt2), its inputs named after the program's user
    inputs (forward()'s arguments: the names the torch-export backend declares)."""
    import torch
    program = torch.export.load(source)
    return name_inputs(ov.convert_model(program), list(program.graph_signature.user_inputs),
                       "the program")


def name_inputs(model, names, whose):
    """Names the IR's inputs in order (convert_model keeps the traced arguments' order but
    names them by debug names such as x.1 or a number)."""
    if len(model.inputs) != len(names):
        raise RuntimeError(f"the IR has {len(model.inputs)} input(s), {whose} "
                           f"{len(names)} ({', '.join(names)}): cannot name them")
    for port, name in zip(model.inputs, names):
        port.get_tensor().set_names({name})
        port.get_node().set_friendly_name(name)
    return model


def convert_transformers(ov, source):
    """The verify-conversion gate's Path B for a Hugging Face folder: transformers' PyTorch model
    for the folder's task, traced by convert_model on the inputs the hf backend makes for it
    (runtime/hf_tasks.py), the IR's inputs named as the model's forward() arguments and its
    outputs as the model's output keys (logits, ...), so the hf backend's run of the folder and
    the IR compare by name. Generative models are refused: an IR of one forward pass has no
    generate loop to compare with the folder's greedy generation."""
    import inspect
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import hf_generate
    import hf_tasks
    with open(os.path.join(source, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    task, _ = hf_tasks.resolve_task(config)
    try:
        mode = hf_tasks.mode_of(task, config)
        made, _ = hf_tasks.make_inputs(source, config, task, None, 1, 1)
    except hf_tasks.TaskError as e:
        raise UsageError(f"{source}: {e}")
    if mode == "generate":
        raise UsageError(f"{source} is a {task} model: its IR from convert_model is one forward "
                         "pass without the generate loop the hf backend compares; convert it with "
                         "--to optimum-openvino")
    model, _ = hf_generate.load_model(source, "pytorch", hf_tasks.base_task(task), config,
                                      "default")
    order = list(inspect.signature(model.forward).parameters)
    names = sorted(made[0], key=lambda n: order.index(n) if n in order else len(order))
    example = {name: torch.from_numpy(made[0][name]) for name in names}
    with torch.no_grad():
        converted = ov.convert_model(model, example_input=example)
    return name_inputs(converted, names, "the example")


def dtype_name(dtype):
    """numpy's dtype name -> OpenVINO's element type name."""
    types = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
             "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
             "bool": "boolean"}
    if dtype not in types:
        raise UsageError(f"--input-dtype {dtype}: one of {', '.join(types)}")
    return types[dtype]


def inject_oom(weight_format):
    if weight_format not in os.environ.get(INJECT_OOM_ENV, "").split(","):
        return
    print(f"MemoryError: out of memory exporting with --weight-format {weight_format} "
          f"(injected by {INJECT_OOM_ENV})", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def inject_hang(weight_format):
    if weight_format not in os.environ.get(INJECT_HANG_ENV, "").split(","):
        return
    print(f"hanging in the export with --weight-format {weight_format} (injected by "
          f"{INJECT_HANG_ENV})", file=sys.stderr, flush=True)
    time.sleep(3600)


def inject_perturbation(weight_format, model):
    """The folder to export: `model`, or a perturbed copy of it when the test asks for one."""
    if weight_format not in os.environ.get(INJECT_PERTURB_ENV, "").split(","):
        return model
    copy = os.path.join(tempfile.mkdtemp(prefix="convgate-perturbed-"), "model")
    perturb = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "tests", "hf",
                           "perturb_hf_model.py")
    subprocess.run([sys.executable, perturb, model, copy], check=True)
    print(f"exporting a perturbed copy of {model} (injected by {INJECT_PERTURB_ENV})",
          file=sys.stderr, flush=True)
    return copy


def exec_optimum(args):
    if not os.path.isfile(os.path.join(args.model, "config.json")):
        raise UsageError(f"{args.model} is not a Hugging Face model folder: it has no config.json")
    cli = os.path.join(os.path.dirname(sys.executable), "optimum-cli")
    if not os.path.isfile(cli):
        raise FileNotFoundError(f"{cli} is missing: the venv lacks optimum (scripts/setup.sh)")
    model = args.model
    if args.exporter == "openvino":
        model = inject_perturbation(args.weight_format, model)
    command = [cli, "export", args.exporter, "--model", model, "--task", args.task]
    if args.exporter == "openvino":
        command += ["--weight-format", args.weight_format]
        if args.group_size is not None:
            command += ["--group-size", str(args.group_size)]
        # optimum-intel 1.27's stateful encoder-decoder export crashes on t5 ("Attempt to get a
        # name for a Tensor without names", fixed upstream after 1.27: huggingface/optimum-intel
        # PR 1857); the stateless export runs on the same OVModelForSeq2SeqLM (docs/hf-zoo.md).
        if args.task.startswith("text2text-generation"):
            command.append("--disable-stateful")
    command.append(args.out)
    record = {"task": args.task, "exporter": f"optimum-cli export {args.exporter}",
              "command": command}
    record.update(versions("optimum", "optimum-intel", "optimum-onnx", "openvino",
                           "transformers", "torch"))
    emit_record(record, args.record)
    if args.exporter == "openvino":
        inject_oom(args.weight_format)
        inject_hang(args.weight_format)
    # The Hub is not reachable from here, and a local folder needs nothing from it.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.stderr.flush()
    os.execv(cli, command)


def main(argv):
    args = parse_args(argv)
    start = time.monotonic()
    try:
        if args.command == "optimum":
            exec_optimum(args)  # returns only by raising
        path = convert_native(args)
    except UsageError as error:
        print(f"openvino_export.py: {error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:  # the conversion itself failed: keep the converter's own words
        source = getattr(args, "source", None) or getattr(args, "model", "")
        print(f"openvino_export.py: converting {source} failed: {type(error).__name__}: {error}",
              file=sys.stderr)
        return EXIT_FAILED
    record = {"source": args.source, "out": args.out, "path": path, "compress_to_fp16": args.fp16,
              "seconds": round(time.monotonic() - start, 3)}
    record.update(versions("openvino", "tensorflow-cpu" if path == "ovc" else "torch"))
    if getattr(args, "int8", False):
        record.update(versions("nncf"))
        record["calibration_samples"] = getattr(args, "calibration_count", 0)
    emit_record(record, args.record)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
