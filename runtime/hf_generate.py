#!/usr/bin/env python3
"""Runs a Hugging Face model folder or its OpenVINO export once, deterministically, and saves what
convgate compares: a short greedy generation, or one forward pass.

Run with the project's venv (~/.cache/convgate-deps/venv: transformers, torch, optimum-intel).
Nothing is downloaded (HF_HUB_OFFLINE=1 is set before transformers is imported).

  hf_generate.py --model zoo/gpt2 --prompt "hello world" --new-tokens 8 --out src.npz
  hf_generate.py --model gpt2-ov/ --prompt "hello world" --new-tokens 8 --out tgt.npz
  convgate compare src.npz tgt.npz

--model is a transformers folder (config.json and weights: run by PyTorch through the Auto class
of the task), an optimum-intel OpenVINO export (openvino_*.xml: run by the matching OVModelFor*
class on CPU) or an optimum ONNX export (*.onnx: ORTModelFor*, ONNX Runtime's CPU provider);
--backend says which when the folder has several.

Generative tasks (text-generation, text2text-generation): greedy generation of exactly N new tokens
(do_sample=False, one beam, min_new_tokens = max_new_tokens = N, so an early end-of-sequence token
is not taken and both sides produce the same length). The .npz holds
  token_ids          int64 [1, prompt + N]: the prompt's ids, then the N generated ids (for
                     text2text models too: the encoder's prompt, then the decoder's N new ids)
  first_step_logits  float32 [1, vocab]: the raw logits of the first generated position (before
                     any logits processor)
Other tasks: one forward pass on a fixed input, saving the main output (float32):
  fill-mask, text-classification          logits            (the tokenized --prompt)
  feature-extraction                      last_hidden_state (the tokenized --prompt)
  image-classification                    logits            (pixel_values ~ N(0,1), seeded)
  zero-shot-image-classification          logits_per_image  (two fixed captions, pixel_values)
  automatic-speech-recognition (CTC)      logits            (input_values ~ N(0,1), 1 s)
  automatic-speech-recognition (seq2seq)  greedy generation as above from input_features
                                          ~ N(0,1) [1, mel bins, 2 x max_source_positions];
                                          token_ids is [1, N] (no text prompt)
The task comes from --task, else from the folder's config (architectures and model_type).

Prints one JSON line on stdout describing what ran (backend, model class, task, prompt length, new
tokens, output names and shapes, seconds). Exit codes: 0 ok, 2 usage (a missing or unreadable
folder, an unknown task), 3 the model failed to load or run (message on stderr naming the folder).
"""

import argparse
import json
import os
import sys
import time

# transformers imports TensorFlow whenever it is installed (the venv has tensorflow-cpu for ovc's
# SavedModel path), and TensorFlow brings h5py, whose at-fork handler deadlocks against Python's
# import lock when a thread forks while another imports: an optimum-cli export of gpt2 hung so,
# idle until the conversion timeout, in two full test runs. Every model these tools load is
# PyTorch, so transformers is told not to look for TensorFlow (children inherit it).
os.environ.setdefault("USE_TF", "0")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3

DEFAULT_PROMPT = "hello world, this is"
DEFAULT_CAPTIONS = ["a photo of a cat", "a photo of a dog"]
GENERATIVE = ("text-generation", "text2text-generation")
TASKS = GENERATIVE + ("fill-mask", "feature-extraction", "text-classification",
                      "token-classification", "question-answering", "image-classification",
                      "zero-shot-image-classification", "automatic-speech-recognition",
                      "audio-classification")
SEQ2SEQ_TYPES = ("t5", "mt5", "bart", "mbart", "marian", "pegasus", "longt5")

# (transformers class, optimum-intel class) per task; ASR splits by architecture.
CLASSES = {
    "text-generation": ("AutoModelForCausalLM", "OVModelForCausalLM"),
    "text2text-generation": ("AutoModelForSeq2SeqLM", "OVModelForSeq2SeqLM"),
    "fill-mask": ("AutoModelForMaskedLM", "OVModelForMaskedLM"),
    "feature-extraction": ("AutoModel", "OVModelForFeatureExtraction"),
    "text-classification": ("AutoModelForSequenceClassification",
                            "OVModelForSequenceClassification"),
    "token-classification": ("AutoModelForTokenClassification", "OVModelForTokenClassification"),
    "question-answering": ("AutoModelForQuestionAnswering", "OVModelForQuestionAnswering"),
    "audio-classification": ("AutoModelForAudioClassification",
                             "OVModelForAudioClassification"),
    "image-classification": ("AutoModelForImageClassification", "OVModelForImageClassification"),
    "zero-shot-image-classification": ("AutoModelForZeroShotImageClassification",
                                       "OVModelForZeroShotImageClassification"),
    "automatic-speech-recognition-seq2seq": ("AutoModelForSpeechSeq2Seq",
                                             "OVModelForSpeechSeq2Seq"),
    "automatic-speech-recognition-ctc": ("AutoModelForCTC", "OVModelForCTC"),
}


class UsageError(Exception):
    pass


class RunError(Exception):
    pass


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="hf_generate.py",
        description="Greedy generation (or one forward pass) of a Hugging Face model folder or "
        "its OpenVINO export, saved as .npz for `convgate compare`.")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a transformers model folder or an optimum-intel OpenVINO export")
    parser.add_argument("--out", required=True, metavar="OUT.npz", help="where to save outputs")
    parser.add_argument("--backend", choices=["auto", "pytorch", "openvino", "onnxruntime"],
                        default="auto", help="auto (default): openvino when DIR holds "
                        "openvino_*.xml, onnxruntime when it holds .onnx files, else pytorch")
    parser.add_argument("--task", help="one of %s (a '-with-past' suffix is accepted); default: "
                        "from the folder's config" % ", ".join(TASKS))
    prompt = parser.add_mutually_exclusive_group()
    prompt.add_argument("--prompt", help="text to tokenize (default %r)" % DEFAULT_PROMPT)
    prompt.add_argument("--token-ids", metavar="ID,ID,...",
                        help="the prompt as token ids (no tokenizer needed)")
    parser.add_argument("--new-tokens", type=int, default=8, metavar="N",
                        help="tokens to generate (default 8)")
    parser.add_argument("--inference-precision", choices=["default", "f32", "bf16", "f16"],
                        default="default",
                        help="OpenVINO CPU INFERENCE_PRECISION_HINT (default: the plugin's own, "
                        "bf16 on CPUs with AMX or AVX512-BF16, else f32)")
    parser.add_argument("--seed", type=int, default=0,
                        help="torch seed and the seed of generated inputs (default 0)")
    args = parser.parse_args(argv)
    if args.new_tokens < 1:
        parser.error("--new-tokens must be at least 1, got %d" % args.new_tokens)
    if args.token_ids is not None:
        try:
            args.token_ids = [int(t) for t in args.token_ids.split(",") if t.strip()]
        except ValueError:
            parser.error("--token-ids: not a comma-separated list of integers: %r"
                         % args.token_ids)
        if not args.token_ids:
            parser.error("--token-ids: empty")
    if args.task and args.task.endswith("-with-past"):
        args.task = args.task[:-len("-with-past")]
    if args.task and args.task not in TASKS:
        parser.error("--task %s: not one of %s" % (args.task, ", ".join(TASKS)))
    return args


def read_config(folder):
    path = os.path.join(folder, "config.json")
    if not os.path.isdir(folder):
        raise UsageError("%s: not a folder" % folder)
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise UsageError("%s: cannot read config.json: %s" % (folder, e.strerror))
    except ValueError as e:
        raise UsageError("%s: config.json is not valid JSON: %s" % (path, e))


def is_openvino_folder(folder):
    return any(n.startswith("openvino_") and n.endswith("model.xml") for n in os.listdir(folder))


def is_onnx_folder(folder):
    return any(n.endswith(".onnx") for n in os.listdir(folder))


def resolve_task(config, folder):
    """The task from the config: architectures first, then model_type."""
    archs = config.get("architectures") or []
    arch = archs[0] if archs else ""
    model_type = config.get("model_type", "")
    if arch.endswith("ForCausalLM") or arch.endswith("LMHeadModel"):
        return "text-generation"
    if arch.endswith("ForConditionalGeneration") and config.get("num_mel_bins"):
        return "automatic-speech-recognition"
    if arch.endswith("ForCTC"):
        return "automatic-speech-recognition"
    if model_type in SEQ2SEQ_TYPES or arch.endswith("ForConditionalGeneration"):
        return "text2text-generation"
    if arch.endswith("ForMaskedLM"):
        return "fill-mask"
    if arch.endswith("ForSequenceClassification"):
        return "text-classification"
    if arch.endswith("ForImageClassification"):
        return "image-classification"
    if model_type == "clip":
        return "zero-shot-image-classification"
    if arch or model_type:
        return "feature-extraction"
    raise UsageError("%s: config.json names no architectures and no model_type; give --task"
                     % folder)


def model_classes(task, config):
    if task == "automatic-speech-recognition":
        kind = "seq2seq" if config.get("is_encoder_decoder") else "ctc"
        return CLASSES["automatic-speech-recognition-" + kind]
    return CLASSES[task]


def seq2seq_without_past(folder):
    """An ONNX encoder-decoder export whose decoder takes no past key/values."""
    names = os.listdir(folder)
    return "encoder_model.onnx" in names and not any(
        n.endswith(".onnx") and ("with_past" in n or "merged" in n) for n in names)


def load_model(folder, backend, task, config, precision):
    torch_name, ov_name = model_classes(task, config)
    if backend == "openvino":
        import logging
        import optimum.intel
        cls = getattr(optimum.intel, ov_name)
        # optimum-intel warns that it "could not infer whether the model was already converted"
        # for every local folder (it probes the hub cache first); set after the import above,
        # which configures optimum's logger
        logging.getLogger("optimum").setLevel(logging.ERROR)
        ov_config = {}
        if precision != "default":
            ov_config["INFERENCE_PRECISION_HINT"] = precision
        # an absolute path: a relative one is also tried as a hub id first
        model = cls.from_pretrained(os.path.abspath(folder), device="CPU", ov_config=ov_config)
        return model, ov_name
    if backend == "onnxruntime":
        import logging
        import optimum.onnxruntime
        ort_name = "ORT" + ov_name[len("OV"):]
        cls = getattr(optimum.onnxruntime, ort_name)
        logging.getLogger("optimum").setLevel(logging.ERROR)
        kwargs = {"provider": "CPUExecutionProvider"}
        if seq2seq_without_past(folder):
            # optimum exports Whisper for automatic-speech-recognition without past; its
            # loader looks for a with-past decoder unless told there is none
            kwargs["use_cache"] = False
        model = cls.from_pretrained(os.path.abspath(folder), **kwargs)
        return model, ort_name
    import transformers
    cls = getattr(transformers, torch_name)
    model = cls.from_pretrained(os.path.abspath(folder))
    model.eval()
    return model, torch_name


def tokenize(folder, args, text):
    import torch
    if args.token_ids is not None:
        ids = torch.tensor([args.token_ids], dtype=torch.int64)
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    from transformers import AutoTokenizer
    try:
        tok = AutoTokenizer.from_pretrained(folder)
    except Exception as e:  # noqa: BLE001 - any tokenizer problem is the folder's
        raise RunError("%s: cannot load a tokenizer (give --token-ids instead): %s" % (folder, e))
    enc = tok(text, return_tensors="pt")
    return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}


def seeded_normal(seed, shape):
    import numpy as np
    import torch
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def generate(model, inputs, prompt_ids, new_tokens, config):
    """Greedy generation of exactly new_tokens tokens; returns (token_ids, first_step_logits)."""
    import torch
    kwargs = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                  num_beams=1, output_logits=True, return_dict_in_generate=True)
    gen_config = getattr(model, "generation_config", None)
    if gen_config is not None and gen_config.pad_token_id is None:
        eos = gen_config.eos_token_id
        kwargs["pad_token_id"] = eos[0] if isinstance(eos, list) else eos
    with torch.no_grad():
        out = model.generate(**inputs, **kwargs)
    sequences = out.sequences
    if config.get("is_encoder_decoder"):  # the decoder's start token(s), then the new ones
        generated = sequences.shape[1] - 1
        new = sequences[:, -new_tokens:]
        token_ids = torch.cat([prompt_ids, new], dim=1) if prompt_ids is not None else new
    else:  # the prompt, then the new ones
        generated = sequences.shape[1] - prompt_ids.shape[1]
        token_ids = sequences
    if generated < new_tokens or len(out.logits) != new_tokens:
        raise RunError("generate() gave %d new tokens and %d logit steps, wanted %d of each"
                       % (generated, len(out.logits), new_tokens))
    return token_ids.to(torch.int64), out.logits[0].to(torch.float32)


def run(args):
    import numpy as np
    import torch
    folder = args.model
    config = read_config(folder)
    backend = args.backend
    if backend == "auto":
        backend = "openvino" if is_openvino_folder(folder) else \
            "onnxruntime" if is_onnx_folder(folder) else "pytorch"
    elif backend == "openvino" and not is_openvino_folder(folder):
        raise UsageError("%s: --backend openvino but the folder has no openvino_*model.xml"
                         % folder)
    elif backend == "onnxruntime" and not is_onnx_folder(folder):
        raise UsageError("%s: --backend onnxruntime but the folder has no .onnx file" % folder)
    task = args.task or resolve_task(config, folder)
    torch.manual_seed(args.seed)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    start = time.monotonic()
    try:
        model, class_name = load_model(folder, backend, task, config, args.inference_precision)
    except Exception as e:  # noqa: BLE001 - a load failure names the folder and the class
        raise RunError("%s: cannot load with the %s backend (task %s): %s: %s"
                       % (folder, backend, task, type(e).__name__, e))
    loaded = time.monotonic()
    record = {"model": folder, "backend": backend, "model_class": class_name, "task": task,
              "model_type": config.get("model_type")}
    if backend == "openvino":
        precision = args.inference_precision
        if precision == "default":
            import openvino
            hint = openvino.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
            precision = "default (%s)" % getattr(hint, "get_type_name", lambda: hint)()
        record["inference_precision"] = precision
    outputs = {}
    try:
        if task in GENERATIVE:
            inputs = tokenize(folder, args, args.prompt or DEFAULT_PROMPT)
            prompt_ids = inputs["input_ids"]
            outputs["token_ids"], outputs["first_step_logits"] = generate(
                model, inputs, prompt_ids, args.new_tokens, config)
            record.update(prompt_length=int(prompt_ids.shape[1]), new_tokens=args.new_tokens)
        elif task == "automatic-speech-recognition" and config.get("is_encoder_decoder"):
            bins = config.get("num_mel_bins", 80)
            frames = 2 * config.get("max_source_positions", 1500)
            features = seeded_normal(args.seed, [1, bins, frames])
            outputs["token_ids"], outputs["first_step_logits"] = generate(
                model, {"input_features": features}, None, args.new_tokens, config)
            record.update(input_features=list(features.shape), new_tokens=args.new_tokens)
        else:
            with torch.no_grad():
                outputs.update(forward_once(model, folder, args, task, config, record))
    except (RunError, UsageError):
        raise
    except Exception as e:  # noqa: BLE001 - a run failure names the folder and the class
        raise RunError("%s: %s (%s) failed on task %s: %s: %s"
                       % (folder, class_name, backend, task, type(e).__name__, e))
    record["seconds"] = {"load": round(loaded - start, 3),
                         "run": round(time.monotonic() - loaded, 3)}
    arrays = {}
    for name, value in outputs.items():
        arrays[name] = value.detach().cpu().numpy() if hasattr(value, "detach") else value
    record["outputs"] = {n: {"dtype": str(a.dtype), "shape": list(a.shape)}
                         for n, a in arrays.items()}
    out_dir = os.path.dirname(os.path.abspath(args.out))
    os.makedirs(out_dir, exist_ok=True)
    try:
        np.savez(args.out, **arrays)
    except OSError as e:
        raise RunError("%s: cannot write: %s" % (args.out, e))
    record["out"] = args.out
    return record


def forward_once(model, folder, args, task, config, record):
    """One forward pass on the task's fixed input; returns {output name: tensor}."""
    if task in ("fill-mask", "feature-extraction", "text-classification"):
        inputs = tokenize(folder, args, args.prompt or DEFAULT_PROMPT)
        if "token_type_ids" in getattr(model, "input_names", {"token_type_ids": 0}) \
                and config.get("type_vocab_size"):
            import torch
            inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
        record["prompt_length"] = int(inputs["input_ids"].shape[1])
        out = model(**inputs)
        name = "last_hidden_state" if task == "feature-extraction" else "logits"
        return {name: out[name].float()}
    if task in ("image-classification", "zero-shot-image-classification"):
        vision = config.get("vision_config", config)
        size = vision.get("image_size", 224)
        pixels = seeded_normal(args.seed, [1, vision.get("num_channels", 3), size, size])
        record["pixel_values"] = list(pixels.shape)
        if task == "image-classification":
            return {"logits": model(pixel_values=pixels)["logits"].float()}
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(folder)
        enc = tok(DEFAULT_CAPTIONS, padding="max_length", return_tensors="pt",
                  max_length=config.get("text_config", {}).get("max_position_embeddings", 16))
        record["captions"] = DEFAULT_CAPTIONS
        out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                    pixel_values=pixels)
        return {"logits_per_image": out["logits_per_image"].float()}
    if task == "automatic-speech-recognition":
        values = seeded_normal(args.seed, [1, 16000])
        record["input_values"] = list(values.shape)
        return {"logits": model(input_values=values)["logits"].float()}
    raise UsageError("task %s: no forward pass defined" % task)


def main(argv):
    args = parse_args(argv)
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as e:
        print("hf_generate.py: %s (run with the project's venv, "
              "~/.cache/convgate-deps/venv/bin/python)" % e, file=sys.stderr)
        return EXIT_FAILED
    transformers.logging.set_verbosity_error()
    try:
        record = run(args)
    except UsageError as e:
        print("hf_generate.py: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    except RunError as e:
        print("hf_generate.py: %s" % e, file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(record, sort_keys=True))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
