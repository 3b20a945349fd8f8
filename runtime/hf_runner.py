#!/usr/bin/env python3
"""Runs a Hugging Face model folder for convgate's "hf" backend.

    hf_runner.py describe MODEL_DIR
    hf_runner.py inputs MODEL_DIR OUT.npz [--prompt TEXT] [--seed S] [--samples N]
    hf_runner.py host
    hf_runner.py run MODEL_DIR INPUTS.npz OUTPUTS.npz [--new-tokens N]

MODEL_DIR is either a transformers folder (config.json and PyTorch weights: model.safetensors or
pytorch_model.bin), run with transformers on PyTorch, or an optimum-intel OpenVINO export
(openvino_model.xml, or openvino_encoder_model.xml + openvino_decoder_model.xml for
encoder-decoder models), run with optimum-intel on OpenVINO's CPU plugin at float32 inference
precision (the plugin would otherwise pick bf16 on CPUs that have it, which is a different
computation than the one being verified).

The task comes from config.json by OpenVINO's verify-conversion rule (runtime/hf_tasks.py:
pipeline_tag, then encoder-decoder types, then the architecture class). Generative tasks
(text-generation, text2text-generation, Whisper-style speech recognition) declare
    input  input_ids          int64[1, sequence]   the prompt's token ids (speech: input_features
                                                    float32[1, mel bins, frames])
    output token_ids          int64[1, tokens]     prompt + N greedily generated tokens (an
                                                    encoder-decoder model: the prompt, then the
                                                    N tokens its decoder generated)
    output first_step_logits  float32[1, vocab]    raw logits of the first generated position
    output text               string[1]            the N new tokens decoded by tokenizer.json,
                                                    special tokens skipped (the gate's LM check)
and every other task (fill-mask, text/token classification, question answering, feature
extraction, image and audio classification, CTC speech recognition, CLIP) runs one forward pass:
its inputs as the tokenizer or processor would give them (input_ids, attention_mask,
token_type_ids; pixel_values; input_values), its main outputs (logits, last_hidden_state, ...)
as float32.

`describe` prints one JSON object: the task and why, the mode (generate or forward), the runtime
and its versions, and the ports above.

`inputs` writes inputs that exercise the model to OUT.npz (flat for one sample, sample_<i>/<name>
for several) and prints {"task", "description"}: the prompt tokenized by the folder's
tokenizer.json ("Hello" for generation, as the gate does; a test sentence for encoders), attention
masks of ones, token types of zeros, pixel values and audio ~ N(0,1) at the config's sizes.

`host` is how convgate runs every Hugging Face model of one convgate process (a verify's source,
its export, their inputs): one process that imports transformers, torch and optimum once and
holds each model loaded by a request, speaking JSON lines (the openvino backend's runner protocol,
src/backends/runner/runner_protocol.h, with a model id in each request). stdout is kept for the
responses (whatever a library prints goes to stderr), and the host exits when its parent dies.
It answers {"ok": true, "version": ...} at start, then one response line per request line:
    {"op": "load", "id": K, "model": DIR, "new_tokens": N, "present": false}
        loads DIR as model K (with "present": true, a decoder-only generator also returns its
        key/value cache after the prompt, present.<layer>.key and .value; other tasks ignore it,
        and the description's "present_key_values" says which); answers {"ok": true, "version", "settings", "inputs": [PORT...],
        "outputs": [PORT...]} (a dynamic dim by its name: [1, "sequence"]) and "description",
        `describe`'s object
    {"op": "run", "id": K, "inputs": IN.npz, "outputs": OUT.npz, "names": [...]}
        runs one sample: {"ok": true} once OUT.npz holds the outputs; a K not loaded is
        {"ok": false, "code": "NotFound", ...}
    {"op": "unload", "id": K}
    {"op": "inputs", "model": DIR, "outputs": OUT.npz, "prompt": P, "seed": S, "samples": N}
        as `inputs`; the response carries "description"
    {"op": "warm", "runtimes": ["pytorch", "openvino", "onnxruntime"]}
        answered at once, then imports those runtimes' libraries before reading the next
        request: convgate sends it before an export, so the imports overlap the export.
Failures are {"ok": false, "code": C, "message": M} and the host keeps serving.

`run` (one sample per process, for use by hand; convgate uses `host`) generates exactly N new
tokens (greedy, min_new_tokens = max_new_tokens = N, so an early end-of-sequence token cannot make
the two sides' lengths differ), or runs the forward pass, and writes the outputs to OUTPUTS.npz
(written under a temporary name and renamed). Exit codes: 0 ok, 2 usage, 3 the model cannot be
loaded or run (the message names the folder and the reason).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_generate  # noqa: E402  the loader and the greedy generation, shared with the zoo tools
import hf_tasks  # noqa: E402  the task, its ports and inputs that exercise it
# The openvino backend's runner (beside this file) speaks the same protocol: its response writer
# and parent watch.
from openvino_runner import respond, watch_parent  # noqa: E402

EXIT_USAGE = 2
EXIT_FAILURE = 3

class Failure(Exception):
    """A model that cannot be loaded or run: exit 3 with the message."""


def read_config(model_dir):
    path = os.path.join(model_dir, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except FileNotFoundError:
        raise Failure(f"{model_dir}: no config.json (not a Hugging Face model folder)")
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: cannot read: {e}")
    if not isinstance(config, dict):
        raise Failure(f"{path}: not a JSON object")
    return config


def versions(runtime):
    import importlib.metadata as m
    if runtime == "openvino":
        return {"optimum-intel": m.version("optimum-intel"), "openvino": m.version("openvino"),
                "transformers": m.version("transformers")}
    if runtime == "onnxruntime":
        return {"optimum-onnx": m.version("optimum-onnx"), "onnxruntime": m.version("onnxruntime"),
                "transformers": m.version("transformers")}
    return {"transformers": m.version("transformers"), "torch": m.version("torch")}


def runtime_of(model_dir):
    """openvino for an optimum-intel export, onnxruntime for an optimum ONNX export (run by
    optimum's ORTModelFor* classes on ONNX Runtime's CPU provider), else pytorch."""
    if hf_generate.is_openvino_folder(model_dir):
        return "openvino"
    if hf_generate.is_onnx_folder(model_dir):
        return "onnxruntime"
    return "pytorch"


def describe(model_dir):
    config = read_config(model_dir)
    runtime = runtime_of(model_dir)
    task, why = hf_tasks.resolve_task(config)
    try:
        mode = hf_tasks.mode_of(task, config)
        inputs, outputs = hf_tasks.ports(task, config, model_dir)
    except hf_tasks.TaskError as e:
        raise Failure(f"{model_dir}: {e}")
    return {
        "task": task,
        "task_source": why,
        "mode": mode,
        "runtime": runtime,
        "model_type": config.get("model_type", ""),
        "architectures": config.get("architectures") or [],
        "vocab_size": config.get("vocab_size") if mode == "generate" else None,
        "inputs": inputs,
        "outputs": outputs,
        "versions": versions(runtime),
    }


def load(model_dir, info, config):
    """The model, loaded by hf_generate.py's loader (OpenVINO at float32 precision)."""
    task = hf_tasks.base_task(info["task"])
    try:
        return hf_generate.load_model(model_dir, info["runtime"], task, config, "f32")
    except Exception as e:  # every loader error is the model's: say which folder and why
        raise Failure(f"{model_dir}: cannot load it: {type(e).__name__}: {e}")


def decode(model_dir, ids):
    """The generated ids as text (special tokens skipped), by the folder's tokenizer.json (the
    export folders carry the source's tokenizer)."""
    tok = hf_tasks.tokenizer_of(model_dir)
    return tok.decode([int(i) for i in ids], skip_special_tokens=True)


def generate(model_dir, model, inputs, new_tokens, config):
    """hf_generate.py's greedy generation of exactly new_tokens tokens, and its text."""
    import numpy as np
    import torch
    if "input_features" in inputs:  # speech: no text prompt
        features = torch.from_numpy(np.ascontiguousarray(inputs["input_features"],
                                                         dtype=np.float32))
        model_inputs, prompt = {"input_features": features}, None
    else:
        prompt = torch.from_numpy(np.ascontiguousarray(inputs["input_ids"], dtype=np.int64))
        model_inputs = {"input_ids": prompt, "attention_mask": torch.ones_like(prompt)}
    try:
        tokens, logits = hf_generate.generate(model, model_inputs, prompt, new_tokens, config)
    except hf_generate.RunError as e:
        raise Failure(str(e))
    tokens = tokens.numpy()
    outputs = {"token_ids": tokens, "first_step_logits": logits.numpy()}
    if hf_tasks.has_tokenizer(model_dir):  # declared only then (hf_tasks.ports)
        outputs["text"] = np.array([decode(model_dir, tokens[0, -new_tokens:])])
    return outputs


def forward(model, inputs, info):
    """One forward pass; the task's outputs as float32 arrays."""
    import numpy as np
    import torch
    kwargs = {}
    for p in info["inputs"]:
        if p["name"] not in inputs:
            raise Failure(f"the request has no input '{p['name']}' (holds {sorted(inputs)})")
        array = np.ascontiguousarray(inputs[p["name"]])
        kwargs[p["name"]] = torch.from_numpy(array)
    with torch.no_grad():
        out = model(**kwargs)
    result = {}
    for p in info["outputs"]:
        value = out[p["name"]]
        value = value.detach().float().numpy() if hasattr(value, "detach") else np.asarray(
            value, dtype=np.float32)
        result[p["name"]] = value
    return result


def write_npz(path, arrays):
    import numpy as np
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def read_inputs(inputs_path, info):
    """The request's inputs in INPUTS.npz, ids checked against the vocabulary."""
    import numpy as np
    try:
        with np.load(inputs_path) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError) as e:
        raise Failure(f"{inputs_path}: cannot read: {e}")
    for p in info["inputs"]:
        if p["name"] not in arrays:
            raise Failure(f"{inputs_path}: no {p['name']} (holds {sorted(arrays)})")
    ids = arrays.get("input_ids")
    vocab = info.get("vocab_size")
    if info["mode"] == "generate" and ids is not None:
        if ids.ndim != 2 or ids.shape[0] != 1:
            raise Failure(f"input_ids must be int64[1, sequence], got shape {list(ids.shape)}")
        if ids.size and vocab and (ids.min() < 0 or ids.max() >= vocab):
            raise Failure(f"input_ids hold ids outside the vocabulary [0, {vocab}): "
                          f"min {ids.min()}, max {ids.max()}")
    return arrays


def run_one(model_dir, model, class_name, inputs, info, new_tokens, config):
    try:
        if info["mode"] == "generate":
            return generate(model_dir, model, inputs, new_tokens, config)
        return forward(model, inputs, info)
    except Failure:
        raise
    except Exception as e:
        verb = "generate" if info["mode"] == "generate" else "forward"
        raise Failure(f"{model_dir}: {class_name}.{verb} failed: {type(e).__name__}: {e}")


def run(model_dir, inputs_path, outputs_path, new_tokens):
    info = describe(model_dir)
    inputs = read_inputs(inputs_path, info)
    start = time.monotonic()
    config = read_config(model_dir)
    model, class_name = load(model_dir, info, config)
    outputs = run_one(model_dir, model, class_name, inputs, info, new_tokens, config)
    write_npz(outputs_path, outputs)
    info.update({"model_class": class_name, "new_tokens": new_tokens,
                 "seconds": round(time.monotonic() - start, 3)})
    print(json.dumps(info), file=sys.stderr)


def make_inputs(model_dir, out_path, prompt, seed, samples):
    """`inputs`: model-aware inputs for the folder's task, written to OUT.npz (flat for one
    sample, sample_<i>/<name> for several); returns {"task", "description"}."""
    config = read_config(model_dir)
    task, _ = hf_tasks.resolve_task(config)
    try:
        made, description = hf_tasks.make_inputs(model_dir, config, task, prompt, seed, samples)
    except hf_tasks.TaskError as e:
        raise Failure(str(e))
    arrays = {}
    for index, sample in enumerate(made):
        for name, value in sample.items():
            arrays[name if samples == 1 else f"sample_{index}/{name}"] = value
    write_npz(out_path, arrays)
    return {"task": task, "description": description}


def hello(info):
    """The load response: the ports with their named symbols (runner_protocol.h takes a string
    dim as a symbol), and the description for the settings convgate reports."""
    return {"ok": True, "version": ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
            "settings": info["task"] + " on " + info["runtime"],
            "inputs": info["inputs"], "outputs": info["outputs"], "description": info}


# What `warm` imports per runtime: the libraries hf_generate.load_model reaches for, by the
# classes that pull in their modeling code (optimum.intel and transformers import lazily).
WARM_IMPORTS = {
    "pytorch": [("transformers", "PreTrainedModel"), ("transformers", "AutoTokenizer")],
    "openvino": [("optimum.intel", "OVModelForCausalLM")],
    "onnxruntime": [("optimum.onnxruntime", "ORTModelForCausalLM")],
}


def warm(runtimes):
    import importlib
    for runtime in runtimes:
        for module, attribute in WARM_IMPORTS.get(runtime, []):
            try:
                getattr(importlib.import_module(module), attribute)
            except Exception as e:  # noqa: BLE001 - the load that needs it will say why
                print(f"hf_runner.py host: warming {runtime} ({module}) failed: {e}",
                      file=sys.stderr)


def present_ports(model_dir, info, config):
    """present.<layer>.key / .value of a decoder's key/value cache after the prompt, as Optimum's
    ONNX export validation compares them: float32[1, kv_heads, sequence, head_dim]. None for a
    model that is no decoder-only text generator (it has no such cache to compare)."""
    if info["mode"] != "generate" or hf_tasks.base_task(info["task"]) != "text-generation":
        return None
    if info["runtime"] == "openvino":
        raise Failure(f"{model_dir}: an OpenVINO export keeps its key/value cache inside the "
                      "model (a stateful model): there are no present key/values to compare")
    layers = next((config[key] for key in ("num_hidden_layers", "n_layer", "num_layers")
                   if isinstance(config.get(key), int) and config[key] > 0), None)
    if layers is None:
        raise Failure(f"{model_dir}/config.json names no layer count (num_hidden_layers, "
                      "n_layer or num_layers): cannot declare the present key/values")
    shape = [1, "kv_heads", "sequence", "head_dim"]
    return [hf_tasks.port(f"present.{layer}.{part}", "float32", shape)
            for layer in range(layers) for part in ("key", "value")]


def present_outputs(model, inputs):
    """The key/value cache of one forward pass over the prompt (PyTorch's DynamicCache or
    optimum's ORT tuples, as legacy (key, value) pairs per layer)."""
    import numpy as np
    import torch
    prompt = torch.from_numpy(np.ascontiguousarray(inputs["input_ids"], dtype=np.int64))
    with torch.no_grad():
        out = model(input_ids=prompt, attention_mask=torch.ones_like(prompt), use_cache=True)
    cache = out.past_key_values
    if hasattr(cache, "to_legacy_cache"):
        cache = cache.to_legacy_cache()
    outputs = {}
    for layer, (key, value) in enumerate(cache):
        outputs[f"present.{layer}.key"] = key.detach().float().numpy()
        outputs[f"present.{layer}.value"] = value.detach().float().numpy()
    return outputs


class Loaded:
    """A model the host holds: what run_one needs."""

    def __init__(self, model_dir, new_tokens, present=False):
        self.model_dir = model_dir
        self.new_tokens = new_tokens
        self.info = describe(model_dir)
        self.config = read_config(model_dir)
        ports = present_ports(model_dir, self.info, self.config) if present else None
        self.present = ports is not None
        self.info["present_key_values"] = self.present
        if ports:
            self.info["outputs"] = self.info["outputs"] + ports
        self.model, self.class_name = load(model_dir, self.info, self.config)

    def run(self, request):
        inputs = read_inputs(request["inputs"], self.info)
        outputs = run_one(self.model_dir, self.model, self.class_name, inputs, self.info,
                          self.new_tokens, self.config)
        if self.present:
            try:
                outputs.update(present_outputs(self.model, inputs))
            except Exception as e:
                raise Failure(f"{self.model_dir}: {self.class_name} forward pass for the present "
                              f"key/values failed: {type(e).__name__}: {e}")
        write_npz(request["outputs"], outputs)


def host_request(models, request, responses):
    """One request of `host`; raises Failure (code, message) for the response."""
    op = request.get("op")
    if op == "warm":
        respond(responses, ok=True)  # first: the imports run while convgate goes on
        warm(request.get("runtimes", []))
        return
    if op == "load":
        model_dir = os.path.abspath(request["model"])
        if not os.path.isdir(model_dir):
            raise HostFailure("NotFound", f"{model_dir}: not a folder")
        new_tokens = int(request.get("new_tokens", 8))
        if new_tokens < 1:
            raise HostFailure("InvalidArgument", f"new_tokens must be at least 1, got {new_tokens}")
        models.pop(request["id"], None)
        try:
            loaded = Loaded(model_dir, new_tokens, bool(request.get("present", False)))
        except Failure as e:
            raise HostFailure("DataLoss", str(e))
        models[request["id"]] = loaded
        respond(responses, **hello(loaded.info))
        return
    if op == "run":
        loaded = models.get(request.get("id"))
        if loaded is None:
            raise HostFailure("NotFound", f"no model {request.get('id')!r} is loaded")
        try:
            loaded.run(request)
        except Failure as e:
            raise HostFailure("InvalidArgument", str(e))
        respond(responses, ok=True)
        return
    if op == "unload":
        models.pop(request.get("id"), None)
        import gc
        gc.collect()
        respond(responses, ok=True)
        return
    if op == "inputs":
        model_dir = os.path.abspath(request["model"])
        samples = int(request.get("samples", 1))
        if samples < 1:
            raise HostFailure("InvalidArgument", f"samples must be at least 1, got {samples}")
        try:
            made = make_inputs(model_dir, request["outputs"], request.get("prompt"),
                               int(request.get("seed", 1)), samples)
        except Failure as e:
            raise HostFailure("InvalidArgument", str(e))
        respond(responses, ok=True, **made)
        return
    raise HostFailure("InvalidArgument", f"unknown request {op!r}")


class HostFailure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def host(responses):
    """Serves every model convgate loads, one request line at a time, until stdin ends."""
    models = {}
    respond(responses, ok=True, version="hf_runner 3 (host)")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            host_request(models, json.loads(line), responses)
        except HostFailure as e:
            respond(responses, ok=False, code=e.code, message=str(e))
        except ImportError as e:
            respond(responses, ok=False, code="FailedPrecondition",
                    message=f"{sys.executable} cannot import {e.name}: run ./scripts/setup.sh")
        except MemoryError:
            respond(responses, ok=False, code="Unavailable", message="out of memory")
        except (ValueError, KeyError, TypeError) as e:  # a request that is not the protocol
            respond(responses, ok=False, code="InvalidArgument",
                    message=f"bad request: {type(e).__name__}: {e}")
        except Exception as e:  # a bug here, or numpy refusing a file: say so, keep serving
            respond(responses, ok=False, code="Unavailable", message=f"{type(e).__name__}: {e}")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("describe")
    d.add_argument("model_dir")
    r = sub.add_parser("run")
    r.add_argument("model_dir")
    r.add_argument("inputs")
    r.add_argument("outputs")
    r.add_argument("--new-tokens", type=int, default=8)
    i = sub.add_parser("inputs")
    i.add_argument("model_dir")
    i.add_argument("outputs")
    i.add_argument("--prompt")
    i.add_argument("--seed", type=int, default=1)
    i.add_argument("--samples", type=int, default=1)
    sub.add_parser("host")
    args = parser.parse_args(argv[1:])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub: everything is local
    if args.command == "host":
        # The responses get the real stdout; anything a library prints goes to stderr.
        responses = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        watch_parent()
        code = host(responses)
        responses.flush()
        # Past the last response there is nothing to keep: skip the interpreter's teardown of
        # torch and OpenVINO (~1.5 s of CPU that the next convgate command would compete with).
        os._exit(code)
    # An absolute path: from_pretrained takes a relative one that is no folder here for a hub id.
    args.model_dir = os.path.abspath(args.model_dir)
    try:
        if not os.path.isdir(args.model_dir):
            raise Failure(f"{args.model_dir}: not a folder")
        if args.command == "describe":
            print(json.dumps(describe(args.model_dir)))
            return 0
        if args.command == "inputs":
            if args.samples < 1:
                print("hf_runner.py: --samples must be at least 1", file=sys.stderr)
                return EXIT_USAGE
            print(json.dumps(make_inputs(args.model_dir, args.outputs, args.prompt, args.seed,
                                         args.samples)))
            return 0
        if args.new_tokens < 1:
            print("hf_runner.py: --new-tokens must be at least 1", file=sys.stderr)
            return EXIT_USAGE
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
