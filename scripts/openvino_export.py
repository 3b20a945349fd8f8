#!/usr/bin/env python3
"""Conversions to OpenVINO and Hugging Face exports, run by convgate with the project's venv.

Run with the python of the venv scripts/setup.sh creates (openvino, optimum, optimum-intel,
optimum-onnx, transformers, torch: scripts/python-requirements.txt).

  openvino_export.py native --source model.onnx --out model.xml [--fp16]
  openvino_export.py optimum --exporter openvino --model DIR --out OUT_DIR
                     [--task auto|TASK] [--weight-format fp16|int8|int4] [--group-size N]
  openvino_export.py optimum --exporter onnx --model DIR --out OUT_DIR [--task auto|TASK]
  openvino_export.py resolve-task --model DIR

native: the verify-conversion seed's Path B. An ONNX file or a TorchScript file (.pt, .pth, .ts)
goes through openvino.convert_model and openvino.save_model (IR: OUT.xml with OUT.bin beside it;
float weights stay float32 unless --fp16); a TensorFlow SavedModel folder goes through `ovc`.

optimum: Path A. A Hugging Face model folder (config.json + weights) goes through
`optimum-cli export openvino|onnx`. The task is resolved first (resolve-task prints it), then
this process becomes optimum-cli (os.execv: the same pid, so convgate's timeout and an OOM kill
reach the exporter itself, and its stderr is optimum's own).

Task resolution (the seed's, extended to non-generative model types; --task overrides it):
  1. config.json's pipeline_tag, through PIPELINE_TAG_MAP (unknown tags are used as they are);
  2. the model type: t5/mt5/bart/mbart -> text2text-generation-with-past; a type in
     MODEL_TYPE_TASKS -> its task (bert -> feature-extraction, vit -> image-classification, ...);
  3. otherwise text-generation-with-past (the seed's default, right for decoder-only LMs).

Fault injection for tests: CONVGATE_INJECT_EXPORT_OOM=FORMAT makes an optimum export with that
--weight-format print a MemoryError and kill itself with SIGKILL, as the OOM killer would.

Before exec'ing (optimum) or after exporting (native), prints one JSON line on stdout: versions,
the resolved task and where it came from. Exit codes: 0 exported, 1 the export failed (the
exporter's message on stderr), 2 usage.
"""

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# The seed's map (reference/openvino-verify-conversion.txt, "Auto-detect task").
PIPELINE_TAG_MAP = {
    "text-generation": "text-generation-with-past",
    "text2text-generation": "text2text-generation-with-past",
    "image-text-to-text": "image-text-to-text",
    "text-classification": "text-classification",
    "token-classification": "token-classification",
    "question-answering": "question-answering",
    "feature-extraction": "feature-extraction",
    "fill-mask": "fill-mask",
    "text-to-image": "text-to-image",
    "image-to-text": "image-to-text",
    "automatic-speech-recognition": "automatic-speech-recognition",
    "audio-classification": "audio-classification",
}
# The seed's encoder-decoder types.
SEQ2SEQ_TYPES = ("t5", "mt5", "bart", "mbart")
# Model types that are not decoder-only LMs, where the seed's default (text-generation-with-past)
# cannot export: the task optimum's exporter supports for the bare architecture. Encoders export
# their hidden states (feature-extraction); a config naming a head (architectures: *ForMaskedLM,
# *ForSequenceClassification, ...) picks that head's task in architecture_task() first.
MODEL_TYPE_TASKS = {
    "bert": "feature-extraction",
    "roberta": "feature-extraction",
    "distilbert": "feature-extraction",
    "albert": "feature-extraction",
    "electra": "feature-extraction",
    "xlm-roberta": "feature-extraction",
    "vit": "image-classification",
    "deit": "image-classification",
    "convnext": "image-classification",
    "resnet": "image-classification",
    "clip": "zero-shot-image-classification",
    "whisper": "automatic-speech-recognition-with-past",
    "wav2vec2": "automatic-speech-recognition",
}
# A head in config.json's architectures decides the task of an encoder type.
ARCHITECTURE_SUFFIX_TASKS = (
    ("ForMaskedLM", "fill-mask"),
    ("ForSequenceClassification", "text-classification"),
    ("ForTokenClassification", "token-classification"),
    ("ForQuestionAnswering", "question-answering"),
    ("ForImageClassification", "image-classification"),
    ("ForCTC", "automatic-speech-recognition"),
)
WEIGHT_FORMATS = ("fp16", "int8", "int4")
TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".torchscript")
INJECT_OOM_ENV = "CONVGATE_INJECT_EXPORT_OOM"


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
    native.add_argument("--record", metavar="FILE.json", help="also write the JSON record here")
    optimum = sub.add_parser("optimum", help="a Hugging Face model folder through optimum-cli")
    optimum.add_argument("--exporter", required=True, choices=("openvino", "onnx"))
    optimum.add_argument("--model", required=True, metavar="DIR")
    optimum.add_argument("--out", required=True, metavar="OUT_DIR")
    optimum.add_argument("--task", default="auto")
    optimum.add_argument("--weight-format", default="fp16", choices=WEIGHT_FORMATS)
    optimum.add_argument("--group-size", type=int, help="int4 group size (optimum's default 128)")
    optimum.add_argument("--record", metavar="FILE.json", help="also write the JSON record here")
    resolve = sub.add_parser("resolve-task", help="print the task an optimum export would use")
    resolve.add_argument("--model", required=True, metavar="DIR")
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


def read_config(model_dir):
    path = os.path.join(model_dir, "config.json")
    if not os.path.isfile(path):
        raise UsageError(f"{model_dir} is not a Hugging Face model folder: it has no config.json")
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as error:
            raise UsageError(f"{path} is not JSON: {error}")


def architecture_task(config):
    for architecture in config.get("architectures") or []:
        for suffix, task in ARCHITECTURE_SUFFIX_TASKS:
            if architecture.endswith(suffix):
                return task
    return None


def resolve_task(model_dir):
    """(task, how it was found). Reads config.json directly: AutoConfig would import the model's
    code (trust_remote_code) to learn what config.json already says."""
    config = read_config(model_dir)
    tag = config.get("pipeline_tag")
    if tag:
        return PIPELINE_TAG_MAP.get(tag, tag), f"pipeline_tag {tag}"
    model_type = config.get("model_type", "")
    if model_type in SEQ2SEQ_TYPES:
        return "text2text-generation-with-past", f"model_type {model_type}"
    if model_type in MODEL_TYPE_TASKS:
        head = architecture_task(config)
        if head:
            return head, f"model_type {model_type} with architecture {config['architectures'][0]}"
        return MODEL_TYPE_TASKS[model_type], f"model_type {model_type}"
    return "text-generation-with-past", f"model_type {model_type or '(none)'}: the default"


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
    if os.path.isdir(source):
        raise UsageError(f"{source} is a folder but not a TensorFlow SavedModel (no saved_model.pb)"
                         "; a Hugging Face model folder converts with --to optimum-openvino")
    if source.endswith(TORCHSCRIPT_SUFFIXES):
        import torch
        model = ov.convert_model(torch.jit.load(source, map_location="cpu").eval())
        path = "convert_model (TorchScript)"
    else:
        model = ov.convert_model(source)  # ONNX, or any format OpenVINO's frontends read
        path = "convert_model"
    write_ir_atomically(args.out,
                        lambda tmp: ov.save_model(model, tmp, compress_to_fp16=args.fp16))
    return path


def inject_oom(weight_format):
    if os.environ.get(INJECT_OOM_ENV) != weight_format:
        return
    print(f"MemoryError: out of memory exporting with --weight-format {weight_format} "
          f"(injected by {INJECT_OOM_ENV})", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


def exec_optimum(args):
    task, origin = (args.task, "the task parameter") if args.task != "auto" else \
        resolve_task(args.model)
    cli = os.path.join(os.path.dirname(sys.executable), "optimum-cli")
    if not os.path.isfile(cli):
        raise FileNotFoundError(f"{cli} is missing: the venv lacks optimum (scripts/setup.sh)")
    command = [cli, "export", args.exporter, "--model", args.model, "--task", task]
    if args.exporter == "openvino":
        command += ["--weight-format", args.weight_format]
        if args.group_size is not None:
            command += ["--group-size", str(args.group_size)]
    command.append(args.out)
    record = {"task": task, "task_from": origin, "exporter": f"optimum-cli export {args.exporter}",
              "command": command}
    record.update(versions("optimum", "optimum-intel", "optimum-onnx", "openvino",
                           "transformers", "torch"))
    emit_record(record, args.record)
    if args.exporter == "openvino":
        inject_oom(args.weight_format)
    # The Hub is not reachable from here, and a local folder needs nothing from it.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.stderr.flush()
    os.execv(cli, command)


def main(argv):
    args = parse_args(argv)
    start = time.monotonic()
    try:
        if args.command == "resolve-task":
            task, origin = resolve_task(args.model)
            print(json.dumps({"task": task, "task_from": origin}))
            return EXIT_OK
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
    record.update(versions("openvino", "torch"))
    emit_record(record, args.record)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
