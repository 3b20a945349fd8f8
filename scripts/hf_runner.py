#!/usr/bin/env python3
"""Runs a Hugging Face text-generation model for convgate's "hf" backend.

    hf_runner.py describe MODEL_DIR
    hf_runner.py serve MODEL_DIR [--new-tokens N]
    hf_runner.py run MODEL_DIR INPUTS.npz OUTPUTS.npz [--new-tokens N]

MODEL_DIR is either a transformers folder (config.json and PyTorch weights: model.safetensors or
pytorch_model.bin), run with transformers on PyTorch, or an optimum-intel OpenVINO export
(openvino_model.xml, or openvino_encoder_model.xml + openvino_decoder_model.xml for
encoder-decoder models), run with optimum-intel on OpenVINO's CPU plugin at float32 inference
precision (the plugin would otherwise pick bf16 on CPUs that have it, which is a different
computation than the one being verified).

`describe` prints one JSON object: the task, the runtime and its versions, the model class and
the vocabulary size, from which convgate declares the model's signature:
    input  input_ids          int64[1, sequence]   the prompt's token ids
    output token_ids          int64[1, tokens]     prompt + N greedily generated tokens (an
                                                    encoder-decoder model: the prompt, then the
                                                    N tokens its decoder generated)
    output first_step_logits  float32[1, vocab]    raw logits of the first generated position

`serve` is how convgate runs the model: one process per loaded model serving every sample, in the
openvino backend's JSON-lines protocol (src/backends/openvino/openvino_runner.py's docstring;
src/backends/runner/runner_protocol.h): it loads the model once and answers with its ports
    {"ok": true, "version": ..., "settings": ..., "inputs": [PORT...], "outputs": [PORT...]}
then serves each request line {"op": "run", "inputs": IN.npz, "outputs": OUT.npz, "names": [...]}
with {"ok": true} once OUT.npz holds both outputs, or {"ok": false, "code": C, "message": M}. A
start-up failure is answered the same way, and the runner exits 3. stdout is kept for the
responses (whatever a library prints goes to stderr), and the runner exits when its parent dies.

`run` (one sample per process, for use by hand; convgate serves) generates exactly N new
tokens (greedy, min_new_tokens = max_new_tokens = N, so an early
end-of-sequence token cannot make the two sides' lengths differ) and writes both outputs to
OUTPUTS.npz (written under a temporary name and renamed). Exit codes: 0 ok, 2 usage, 3 the model
cannot be loaded or run (the message names the folder and the reason).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_generate  # noqa: E402  the loader and the greedy generation, shared with the zoo tools
# The openvino backend's runner speaks the same protocol: its response writer and parent watch.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src",
                                "backends", "openvino"))
from openvino_runner import respond, watch_parent  # noqa: E402

EXIT_USAGE = 2
EXIT_FAILURE = 3

class Failure(Exception):
    """A model that cannot be loaded or run: exit 3 with the message."""


def read_config(model_dir):
    path = os.path.join(model_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise Failure(f"{model_dir}: no config.json (not a Hugging Face model folder)")
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: cannot read: {e}")


def task_of(config):
    model_type = config.get("model_type", "")
    # The seed's task resolution (OpenVINO verify-conversion gate): encoder-decoder model types
    # generate with text2text-generation-with-past, every other generative type with
    # text-generation-with-past.
    if model_type in hf_generate.SEQ2SEQ_TYPES or config.get("is_encoder_decoder"):
        return "text2text-generation-with-past"
    architectures = config.get("architectures") or []
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures) or not architectures:
        return "text-generation-with-past"
    raise Failure(
        f"model type '{model_type}' ({', '.join(architectures)}) is not a text-generation model: "
        "the hf backend runs text-generation and text2text-generation models; export others with "
        "--to optimum-onnx and verify the ONNX file")


def versions(openvino):
    import importlib.metadata as m
    if openvino:
        return {"optimum-intel": m.version("optimum-intel"), "openvino": m.version("openvino"),
                "transformers": m.version("transformers")}
    return {"transformers": m.version("transformers"), "torch": m.version("torch")}


def describe(model_dir):
    config = read_config(model_dir)
    openvino = hf_generate.is_openvino_folder(model_dir)
    task = task_of(config)
    vocab = config.get("vocab_size")
    if not isinstance(vocab, int) or vocab <= 0:
        raise Failure(f"{model_dir}/config.json: no positive vocab_size")
    return {
        "task": task,
        "runtime": "openvino" if openvino else "pytorch",
        "model_type": config.get("model_type", ""),
        "architectures": config.get("architectures") or [],
        "vocab_size": vocab,
        "versions": versions(openvino),
    }


def load(model_dir, info, config):
    """The model, loaded by hf_generate.py's loader (OpenVINO at float32 precision)."""
    task = info["task"][:-len("-with-past")]
    try:
        return hf_generate.load_model(model_dir, info["runtime"], task, config, "f32")
    except Exception as e:  # every loader error is the model's: say which folder and why
        raise Failure(f"{model_dir}: cannot load it: {type(e).__name__}: {e}")


def generate(model, input_ids, new_tokens, config):
    """hf_generate.py's greedy generation of exactly new_tokens tokens."""
    import numpy as np
    import torch
    ids = torch.from_numpy(np.ascontiguousarray(input_ids, dtype=np.int64))
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    try:
        tokens, logits = hf_generate.generate(model, inputs, ids, new_tokens, config)
    except hf_generate.RunError as e:
        raise Failure(str(e))
    return {"token_ids": tokens.numpy(), "first_step_logits": logits.numpy()}


def write_npz(path, arrays):
    import numpy as np
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def read_input_ids(inputs_path, info):
    """The prompt in INPUTS.npz, checked against the vocabulary."""
    import numpy as np
    try:
        with np.load(inputs_path) as npz:
            if "input_ids" not in npz.files:
                raise Failure(f"{inputs_path}: no input_ids (holds {npz.files})")
            input_ids = npz["input_ids"]
    except (OSError, ValueError) as e:
        raise Failure(f"{inputs_path}: cannot read: {e}")
    if input_ids.ndim != 2 or input_ids.shape[0] != 1:
        raise Failure(f"input_ids must be int64[1, sequence], got shape {list(input_ids.shape)}")
    if input_ids.size and (input_ids.min() < 0 or input_ids.max() >= info["vocab_size"]):
        raise Failure(f"input_ids hold ids outside the vocabulary [0, {info['vocab_size']}): "
                      f"min {input_ids.min()}, max {input_ids.max()}")
    return input_ids


def generate_checked(model_dir, model, class_name, input_ids, new_tokens, config):
    try:
        return generate(model, input_ids, new_tokens, config)
    except Failure:
        raise
    except Exception as e:
        raise Failure(f"{model_dir}: {class_name}.generate failed: {type(e).__name__}: {e}")


def run(model_dir, inputs_path, outputs_path, new_tokens):
    info = describe(model_dir)
    input_ids = read_input_ids(inputs_path, info)
    start = time.monotonic()
    config = read_config(model_dir)
    model, class_name = load(model_dir, info, config)
    outputs = generate_checked(model_dir, model, class_name, input_ids, new_tokens, config)
    write_npz(outputs_path, outputs)
    info.update({"model_class": class_name, "new_tokens": new_tokens,
                 "prompt_tokens": int(input_ids.shape[1]),
                 "seconds": round(time.monotonic() - start, 3)})
    print(json.dumps(info), file=sys.stderr)


def hello(info, vocab):
    port = lambda name, dtype, shape: {"name": name, "type": dtype, "shape": shape}  # noqa: E731
    return {"ok": True, "version": ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
            "settings": info["task"] + " on " + info["runtime"],
            "inputs": [port("input_ids", "int64", [1, -1])],
            "outputs": [port("token_ids", "int64", [1, -1]),
                        port("first_step_logits", "float32", [1, vocab])]}


def serve(model_dir, new_tokens, responses):
    """Loads the model once, then runs one generation per request line until stdin ends."""
    try:
        info = describe(model_dir)
        config = read_config(model_dir)
        model, class_name = load(model_dir, info, config)
    except Failure as e:
        respond(responses, ok=False, code="DataLoss", message=str(e))
        return EXIT_FAILURE
    except ImportError as e:
        respond(responses, ok=False, code="FailedPrecondition",
                message=f"{sys.executable} cannot import {e.name}: run ./scripts/setup.sh")
        return EXIT_FAILURE
    respond(responses, **hello(info, info["vocab_size"]))
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") != "run":
                raise Failure(f"unknown request {request.get('op')!r}")
            input_ids = read_input_ids(request["inputs"], info)
            outputs = generate_checked(model_dir, model, class_name, input_ids, new_tokens,
                                       config)
            write_npz(request["outputs"], outputs)
            respond(responses, ok=True)
        except Failure as e:
            respond(responses, ok=False, code="InvalidArgument", message=str(e))
        except MemoryError:
            respond(responses, ok=False, code="Unavailable", message="out of memory")
        except Exception as e:  # a bug here, or numpy refusing a file: say so, keep serving
            respond(responses, ok=False, code="Unavailable", message=f"{type(e).__name__}: {e}")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("describe")
    d.add_argument("model_dir")
    s = sub.add_parser("serve")
    s.add_argument("model_dir")
    s.add_argument("--new-tokens", type=int, default=8)
    r = sub.add_parser("run")
    r.add_argument("model_dir")
    r.add_argument("inputs")
    r.add_argument("outputs")
    r.add_argument("--new-tokens", type=int, default=8)
    args = parser.parse_args(argv[1:])
    # An absolute path: from_pretrained takes a relative one that is no folder here for a hub id.
    args.model_dir = os.path.abspath(args.model_dir)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub: everything is local
    try:
        if not os.path.isdir(args.model_dir):
            raise Failure(f"{args.model_dir}: not a folder")
        if args.command == "describe":
            print(json.dumps(describe(args.model_dir)))
            return 0
        if args.new_tokens < 1:
            print("hf_runner.py: --new-tokens must be at least 1", file=sys.stderr)
            return EXIT_USAGE
        if args.command == "serve":
            # The responses get the real stdout; anything a library prints goes to stderr.
            responses = os.fdopen(os.dup(1), "w")
            os.dup2(2, 1)
            sys.stdout = sys.stderr
            watch_parent()
            return serve(args.model_dir, args.new_tokens, responses)
        run(args.model_dir, args.inputs, args.outputs, args.new_tokens)
    except Failure as e:
        print(f"hf_runner.py: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except ImportError as e:
        print(f"hf_runner.py: {e}: run ./scripts/setup.sh (it installs the project's venv)",
              file=sys.stderr)
        return EXIT_FAILURE
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
