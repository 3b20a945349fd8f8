#!/usr/bin/env python3
"""Runs every model of the tiny Hugging Face zoo (scripts/make_hf_zoo.sh) through the conversion
paths of the OpenVINO verify-conversion gate and measures what works, how long it takes and how
far the converted model's outputs are from PyTorch's. docs/hf-zoo.md is this script's report.

Run with the project's venv (~/.cache/convgate-deps/venv); nothing is downloaded.

  hf_zoo_paths.py --zoo "$(scripts/make_hf_zoo.sh | tail -1)" --work /tmp/hf-paths \
      --json paths.json --markdown paths.md [--only gpt2,t5] [--convgate build/src/cli/convgate]

Per model (manifest.json gives the folder and the task):
  A-ov    optimum-cli export openvino --task T --weight-format fp16; when the stateful export fails,
          again with --disable-stateful (both recorded). Then hf_generate.py on the PyTorch folder
          and on the export (OpenVINO CPU at its default precision, and with the f32 hint), the
          two .npz compared by `convgate compare` (--convgate) under its default policy and
          under examples/policies/fp16-network.yaml, and by max |difference| here.
  A-onnx  optimum-cli export onnx --task T (optimum-onnx), then hf_generate.py on the export
          (optimum's ORTModelFor*, ONNX Runtime CPU) against the PyTorch run.
  B-pt    openvino.convert_model on the PyTorch model with example inputs (return_dict off, no
          cache), saved as IR with fp16-compressed weights, compiled on CPU; the first output
          against PyTorch's, at the f32 hint and at the default precision.
  B-onnx  openvino.convert_model on each .onnx file of A-onnx, compiled on CPU, run on the same
          deterministic inputs as ONNX Runtime; max |difference| of every output (f32 hint).
Each step runs in its own process with a timeout, so a crash or hang is recorded, not fatal.

Prints the JSON results on stdout. Exit codes: 0 measured (individual paths may have failed:
that is the finding), 2 usage, 3 the zoo could not be read.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

# transformers imports TensorFlow whenever it is installed (the venv has tensorflow-cpu for ovc's
# SavedModel path), and TensorFlow brings h5py, whose at-fork handler deadlocks against Python's
# import lock when a thread forks while another imports: an optimum-cli export of gpt2 hung so,
# idle until the conversion timeout, in two full test runs. Every model these tools load is
# PyTorch, so transformers is told not to look for TensorFlow (children inherit it).
os.environ.setdefault("USE_TF", "0")

EXIT_OK, EXIT_USAGE, EXIT_FAILED = 0, 2, 3
HERE = os.path.dirname(os.path.abspath(__file__))
STEP_TIMEOUT = 900
# convgate's measured tolerances for a network computed in float16 (examples/policies/)
FP16_NETWORK_POLICY = os.path.join(os.path.dirname(HERE), "examples", "policies",
                                   "fp16-network.yaml")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="hf_zoo_paths.py", description=__doc__.split("\n")[0])
    parser.add_argument("--zoo", required=True, metavar="DIR", help="the zoo (make_hf_zoo.sh)")
    parser.add_argument("--work", required=True, metavar="DIR",
                        help="folder for the exports and outputs (created)")
    parser.add_argument("--only", metavar="NAME,...", help="a subset of the zoo's models")
    parser.add_argument("--json", metavar="OUT.json", help="also write the results here")
    parser.add_argument("--markdown", metavar="OUT.md", help="write the matrix as markdown")
    parser.add_argument("--convgate", metavar="BIN",
                        help="a convgate binary: compare the A-ov outputs with it")
    # internal: one Path B measurement in a child process
    parser.add_argument("--path-b", choices=["pt", "onnx"], help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out-dir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def tail(text, lines=3):
    """The last lines of an error output that say something (warnings dropped)."""
    kept = [line for line in text.strip().splitlines()
            if line.strip() and "Warning" not in line and not line.startswith("  warnings.")]
    return " | ".join(kept[-lines:])[-600:]


def run_step(cmd, log_path, env=None):
    start = time.monotonic()
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                                  timeout=STEP_TIMEOUT, env=env)
            rc, out = proc.returncode, proc.stdout
        except subprocess.TimeoutExpired:
            rc, out = "timeout", ""
    with open(log_path) as log:
        err = log.read()
    return {"command": " ".join(cmd), "rc": rc, "seconds": round(time.monotonic() - start, 1),
            "ok": rc == 0, "error": "" if rc == 0 else tail(err), "stdout": out.strip()}


def venv_bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def max_abs(a, b):
    import numpy as np
    if a.shape != b.shape:
        return "shape %s vs %s" % (list(a.shape), list(b.shape))
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def compare_npz(src, tgt, convgate):
    import numpy as np
    a, b = np.load(src), np.load(tgt)
    result = {}
    for name in a.files:
        if name not in b.files:
            result[name] = "missing in target"
        elif a[name].dtype.kind in "iub":
            result[name] = "equal" if np.array_equal(a[name], b[name]) else "DIFFERENT"
        else:
            result[name] = max_abs(a[name], b[name])
    policies = {"convgate": [], "convgate_fp16_network": ["--policy", FP16_NETWORK_POLICY]}
    for key, extra in policies.items() if convgate else ():
        proc = subprocess.run([convgate, "compare", src, tgt] + extra, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        verdict = [line for line in proc.stdout.splitlines()
                   if line.startswith(("PASS", "FAIL"))]
        result[key] = {"rc": proc.returncode, "verdict": verdict[-1] if verdict else
                       tail(proc.stdout)}
    return result


def path_a_ov(entry, zoo, work, convgate):
    src = os.path.join(zoo, entry["folder"])
    out = os.path.join(work, entry["name"], "ov-fp16")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [venv_bin("optimum-cli"), "export", "openvino", "--model", src, "--task", entry["task"],
           "--weight-format", "fp16", out]
    attempts = [run_step(cmd, out + ".log")]
    if not attempts[0]["ok"] and entry["task"].endswith("-with-past"):
        shutil.rmtree(out, ignore_errors=True)
        attempts.append(run_step(cmd[:-1] + ["--disable-stateful", out],
                                 out + ".nostateful.log"))
    result = {"attempts": attempts, "ok": attempts[-1]["ok"]}
    if not result["ok"]:
        return result
    gen = [sys.executable, os.path.join(HERE, os.pardir, "runtime", "hf_generate.py"), "--task", entry["task"]]
    npz = os.path.join(work, entry["name"], "pytorch.npz")
    result["run_pytorch"] = run_step(gen + ["--model", src, "--out", npz], npz + ".log")
    for precision in ("default", "f32"):
        tgt = os.path.join(work, entry["name"], "ov-fp16-%s.npz" % precision)
        step = run_step(gen + ["--model", out, "--out", tgt, "--inference-precision", precision],
                        tgt + ".log")
        result["run_ov_" + precision] = step
        if step["ok"] and result["run_pytorch"]["ok"]:
            result["compare_" + precision] = compare_npz(npz, tgt, convgate)
    return result


def path_a_onnx(entry, zoo, work, convgate):
    src = os.path.join(zoo, entry["folder"])
    out = os.path.join(work, entry["name"], "onnx")
    shutil.rmtree(out, ignore_errors=True)
    step = run_step([venv_bin("optimum-cli"), "export", "onnx", "--model", src, "--task",
                     entry["task"], out], out + ".log")
    step["files"] = sorted(f for f in os.listdir(out) if f.endswith(".onnx")) \
        if os.path.isdir(out) else []
    if not step["ok"]:
        return step
    gen = [sys.executable, os.path.join(HERE, os.pardir, "runtime", "hf_generate.py"), "--task", entry["task"]]
    npz = os.path.join(work, entry["name"], "pytorch.npz")
    if not os.path.isfile(npz):
        step["run_pytorch"] = run_step(gen + ["--model", src, "--out", npz], npz + ".log")
    tgt = os.path.join(work, entry["name"], "onnx-ort.npz")
    step["run_ort"] = run_step(gen + ["--model", out, "--out", tgt], tgt + ".log")
    if step["run_ort"]["ok"] and os.path.isfile(npz):
        step["compare"] = compare_npz(npz, tgt, convgate)
    return step


def path_b(kind, entry, zoo, work):
    out = os.path.join(work, entry["name"], "b-" + kind)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    model_dir = os.path.join(zoo, entry["folder"]) if kind == "pt" else \
        os.path.join(work, entry["name"], "onnx")
    step = run_step([sys.executable, os.path.abspath(__file__), "--zoo", zoo, "--work", work,
                     "--path-b", kind, "--model-dir", model_dir, "--out-dir", out],
                    out + ".log")
    if step["stdout"]:
        try:
            step.update(json.loads(step["stdout"].splitlines()[-1]))
        except ValueError:
            pass
    del step["stdout"]
    return step


# --- Path B, in a child process --------------------------------------------------------------

def example_inputs(model_dir, config):
    """Deterministic example inputs for the PyTorch forward pass, by model type."""
    import numpy as np
    import torch
    rng = np.random.default_rng(0)
    model_type = config["model_type"]

    def normal(*shape):
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))

    def tokens(text):
        from transformers import AutoTokenizer
        enc = AutoTokenizer.from_pretrained(model_dir)(text, return_tensors="pt")
        return {k: v for k, v in enc.items()}
    if model_type == "bert":
        return tokens("the quick brown [MASK] jumps over the lazy dog")
    if model_type in ("gpt2", "llama"):
        return tokens("hello world, this is")
    if model_type == "t5":
        enc = tokens("translate english to german: the house is wonderful")
        enc["decoder_input_ids"] = torch.tensor([[config["decoder_start_token_id"], 5, 6]])
        return enc
    if model_type == "vit":
        return {"pixel_values": normal(1, 3, config["image_size"], config["image_size"])}
    if model_type == "clip":
        from transformers import AutoTokenizer
        size = config["vision_config"]["image_size"]
        enc = AutoTokenizer.from_pretrained(model_dir)(
            ["a photo of a cat", "a photo of a dog"], padding="max_length", max_length=16,
            return_tensors="pt")
        return {"input_ids": enc["input_ids"], "pixel_values": normal(1, 3, size, size),
                "attention_mask": enc["attention_mask"]}
    if model_type == "whisper":
        return {"input_features": normal(1, config["num_mel_bins"],
                                         2 * config["max_source_positions"]),
                "decoder_input_ids": torch.tensor([[config["decoder_start_token_id"], 5, 6]])}
    if model_type == "wav2vec2":
        return {"input_values": normal(1, 16000)}
    raise ValueError("no example inputs for model type %s" % model_type)


def without_vmap_masks():
    """transformers >= 4.53 builds attention masks with torch.vmap, which torch.jit.trace (and so
    openvino.convert_model) cannot trace: 'RuntimeError: unordered_map::at'. optimum's exporters
    swap in a vmap-free mask function while they trace; this does the same, for good."""
    from optimum.exporters.onnx.model_patcher import sdpa_mask_without_vmap
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS

    def eager_mask_without_vmap(*args, **kwargs):
        import torch
        kwargs.pop("allow_is_causal_skip", None)
        dtype = kwargs.pop("dtype", torch.float32)
        mask = sdpa_mask_without_vmap(*args, allow_is_causal_skip=False, **kwargs)
        return torch.where(mask, torch.tensor(0.0, dtype=dtype),
                           torch.tensor(torch.finfo(dtype).min, dtype=dtype))
    ALL_MASK_ATTENTION_FUNCTIONS.register("sdpa", sdpa_mask_without_vmap)
    ALL_MASK_ATTENTION_FUNCTIONS.register("eager", eager_mask_without_vmap)


def traceable(model):
    """The model as a module whose forward takes the inputs by name and returns its first output
    as a tensor (the ModelOutput's first field), without a KV cache."""
    import inspect
    import torch
    no_cache = {"use_cache": False} if "use_cache" in inspect.signature(model.forward).parameters \
        else {}

    class FirstOutput(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids=None, attention_mask=None, token_type_ids=None,
                    pixel_values=None, decoder_input_ids=None, input_features=None,
                    input_values=None, decoder_attention_mask=None):
            given = dict(input_ids=input_ids, attention_mask=attention_mask,
                         token_type_ids=token_type_ids, pixel_values=pixel_values,
                         decoder_input_ids=decoder_input_ids, input_features=input_features,
                         input_values=input_values, decoder_attention_mask=decoder_attention_mask)
            kwargs = {k: v for k, v in given.items() if v is not None}
            return self.inner(**kwargs, **no_cache, return_dict=True).to_tuple()[0]
    return FirstOutput(model).eval()


def measure_b_pt(model_dir, out_dir):
    import numpy as np
    import openvino as ov
    import torch
    import transformers
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    cls = getattr(transformers, config["architectures"][0])
    model = traceable(cls.from_pretrained(model_dir))
    inputs = example_inputs(model_dir, config)
    with torch.no_grad():
        expected = model(**inputs).float().numpy()
    result = {}
    start = time.monotonic()
    try:
        ov_model = ov.convert_model(model, example_input=inputs)
    except Exception as e:  # noqa: BLE001 - recorded, then retried with the mask patch
        result["unpatched_error"] = " ".join(str(e).split("\n")[:3])[:300]
        without_vmap_masks()
        result["patched"] = "vmap-free attention masks"
        start = time.monotonic()
        try:
            ov_model = ov.convert_model(model, example_input=inputs)
        except Exception as e2:  # noqa: BLE001
            # transformers finds packed sequences with torch.diff when a decoder gets position
            # ids and no attention mask; OpenVINO has no conversion rule for aten::diff
            if "aten::diff" not in str(e2) or "decoder_input_ids" not in inputs:
                raise
            result["patched_error"] = " ".join(str(e2).split("\n")[-3:])[:300]
            inputs["decoder_attention_mask"] = torch.ones_like(inputs["decoder_input_ids"])
            result["patched"] += ", decoder_attention_mask given (avoids aten::diff)"
            start = time.monotonic()
            ov_model = ov.convert_model(model, example_input=inputs)
    result["convert_seconds"] = round(time.monotonic() - start, 2)
    xml = os.path.join(out_dir, "model.xml")
    ov.save_model(ov_model, xml, compress_to_fp16=True)
    core = ov.Core()
    for precision in ("f32", "default"):
        config_ov = {} if precision == "default" else {"INFERENCE_PRECISION_HINT": precision}
        compiled = core.compile_model(core.read_model(xml), "CPU", config_ov)
        feed = []
        for port in compiled.inputs:  # by name: a port may have several ('62,attention_mask')
            name = [n for n in port.get_names() if n in inputs]
            if not name:
                raise RuntimeError("converted model input %s matches none of %s"
                                   % (sorted(port.get_names()), sorted(inputs)))
            feed.append(inputs[name[0]].numpy())
        got = compiled(feed)[compiled.outputs[0]]
        result["max_abs_" + precision] = max_abs(expected, np.asarray(got, dtype=np.float32))
    result["output_shape"] = list(expected.shape)
    result["inputs"] = {k: list(v.shape) for k, v in inputs.items()}
    return result


def onnx_feed(session, config, rng):
    """Deterministic inputs for an optimum ONNX file from its input names, types and dims."""
    import numpy as np
    feed = {}
    vocab = config.get("vocab_size") or config.get("text_config", {}).get("vocab_size", 100)
    past = 4 if any("past" in m.name for m in session.get_inputs()) else 0

    vision = config.get("vision_config", config)
    fixed = {"num_channels": vision.get("num_channels", 3),
             "height": vision.get("image_size", 224), "width": vision.get("image_size", 224)}

    def size(symbol):  # 'batch_size', 'past_sequence_length + sequence_length', 'height', ...
        parts = [part.strip() for part in str(symbol).split("+")]
        return sum(fixed.get(part, 1 if "batch" in part else past if "past" in part else 8)
                   for part in parts)
    for meta in session.get_inputs():
        shape = [dim if isinstance(dim, int) else size(dim) for dim in meta.shape]
        name = meta.name
        if name == "input_values" and not isinstance(meta.shape[-1], int):
            shape[-1] = 16000  # one second of audio: wav2vec2's convolutions need ~400 samples
        if "int" in meta.type:
            if "mask" in name:
                value = np.ones(shape, dtype=np.int64)
            elif "token_type" in name:
                value = np.zeros(shape, dtype=np.int64)
            elif "position" in name:
                value = np.broadcast_to(np.arange(past, past + shape[-1], dtype=np.int64),
                                        shape).copy()
            else:
                value = rng.integers(0, vocab, size=shape, dtype=np.int64)
        elif "bool" in meta.type:
            value = np.ones(shape, dtype=bool)
        else:
            value = rng.standard_normal(shape).astype(np.float32)
        feed[name] = value
    return feed


def measure_b_onnx(onnx_dir, out_dir):
    import numpy as np
    import onnxruntime as ort
    import openvino as ov
    with open(os.path.join(onnx_dir, "config.json")) as f:
        config = json.load(f)
    files = sorted(f for f in os.listdir(onnx_dir) if f.endswith(".onnx"))
    if not files:
        raise ValueError("%s: no .onnx files (Path A onnx failed?)" % onnx_dir)
    core = ov.Core()
    result = {"files": {}}
    for name in files:
        path = os.path.join(onnx_dir, name)
        record = result["files"][name] = {}
        stage = "convert"
        try:
            start = time.monotonic()
            ov_model = ov.convert_model(path)
            record["convert_seconds"] = round(time.monotonic() - start, 2)
            stage = "compile"
            compiled = core.compile_model(ov_model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            stage = "run"
            session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            feed = onnx_feed(session, config, np.random.default_rng(0))
            expected = session.run(None, feed)
            got = compiled(feed)
        except Exception as e:  # noqa: BLE001 - one file's failure is recorded, the rest go on
            record["error"] = "%s: %s" % (stage, tail("%s: %s" % (type(e).__name__, e), 3))
            continue
        errors = {}
        for i, meta in enumerate(session.get_outputs()):
            errors[meta.name] = max_abs(expected[i], np.asarray(got[compiled.outputs[i]]))
        worst = max((e for e in errors.values() if isinstance(e, float)), default=0.0)
        record.update(outputs=len(errors), max_abs_vs_ort=worst)
    if all("error" in f for f in result["files"].values()):
        raise RuntimeError("no file converted and ran: " + "; ".join(
            "%s: %s" % (n, f["error"]) for n, f in result["files"].items()))
    return result


def child(args):
    import transformers
    transformers.logging.set_verbosity_error()
    try:
        if args.path_b == "pt":
            result = measure_b_pt(args.model_dir, args.out_dir)
        else:
            result = measure_b_onnx(args.model_dir, args.out_dir)
    except Exception as e:  # noqa: BLE001 - the failure is the measurement
        print("hf_zoo_paths.py: %s: Path B (%s) failed: %s: %s"
              % (args.model_dir, args.path_b, type(e).__name__, str(e)[:800]), file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(result))
    return EXIT_OK


# --- report ----------------------------------------------------------------------------------

def fmt(value):
    if isinstance(value, float):
        return "%.2g" % value
    return str(value)


def markdown(results):
    rows = ["| model | task | A: optimum-cli export openvino fp16 | A: generate, PyTorch vs OV "
            "(default precision / f32 hint) | A: optimum-cli export onnx | B: convert_model "
            "(PyTorch), fp16 IR: max abs err f32 hint / default | B: convert_model (optimum "
            "ONNX) vs ORT, f32 hint |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        a = r["A-ov"]
        tries = a["attempts"]
        if a["ok"]:
            cell_a = "works, %.0f s" % tries[-1]["seconds"]
            if len(tries) > 1:
                cell_a = ("stateful export fails (`%s`); works with --disable-stateful, %.0f s"
                          % (tries[0]["error"][-160:], tries[-1]["seconds"]))
        else:
            cell_a = "fails: `%s`" % tries[-1]["error"][-200:]
        gen = []
        for precision in ("default", "f32"):
            cmp = a.get("compare_" + precision)
            if cmp is None:
                step = a.get("run_ov_" + precision) or a.get("run_pytorch") or {}
                gen.append("not run: `%s`" % step.get("error", "export failed")[-160:])
                continue
            parts = ["%s %s" % (k, fmt(v)) for k, v in cmp.items()
                     if not k.startswith("convgate")]
            for key, label in (("convgate", "default policy"),
                               ("convgate_fp16_network", "fp16-network policy")):
                if key in cmp:
                    parts.append("convgate %s %s"
                                 % (label, "PASS" if cmp[key]["rc"] == 0 else "FAIL"))
            gen.append(", ".join(parts))
        o = r["A-onnx"]
        cell_o = ("works, %.0f s (%s)" % (o["seconds"], ", ".join(o["files"]))) if o["ok"] \
            else "fails: `%s`" % o["error"][-200:]
        if "compare" in o:
            cell_o += "; ORT vs PyTorch: " + ", ".join(
                "%s %s" % (k, fmt(v)) for k, v in o["compare"].items()
                if not k.startswith("convgate"))
            if "convgate" in o["compare"]:
                cell_o += ", convgate default policy %s" % (
                    "PASS" if o["compare"]["convgate"]["rc"] == 0 else "FAIL")
        elif o["ok"]:
            cell_o += "; not run by ORTModel: `%s`" % o["run_ort"]["error"][-160:]
        b = r["B-pt"]
        cell_b = ("works, convert %.1f s: %s / %s" % (b["convert_seconds"], fmt(b["max_abs_f32"]),
                                                     fmt(b["max_abs_default"]))) if b["ok"] \
            else "fails: `%s`" % b["error"][-200:]
        if b.get("patched"):
            cell_b = "fails as is (`%s`); with %s: %s" % (
                b["unpatched_error"][-120:], b["patched"], cell_b)
            if b.get("patched_error"):
                cell_b += " (with the mask patch alone: `%s`)" % b["patched_error"][-120:]
        bo = r["B-onnx"]
        if bo["ok"]:
            cell_bo = ", ".join(
                "%s: %s" % (n, ("fails (`%s`)" % f["error"][-160:]) if "error" in f
                            else "works, max abs %s" % fmt(f["max_abs_vs_ort"]))
                for n, f in bo["files"].items())
        else:
            cell_bo = "fails: `%s`" % bo["error"][-200:]
        rows.append("| %s | %s | %s | %s | %s | %s | %s |"
                    % (r["name"], r["task"], cell_a, " / ".join(gen), cell_o, cell_b, cell_bo))
    return "\n".join(rows) + "\n"


def main(argv):
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.path_b:
        return child(args)
    manifest_path = os.path.join(args.zoo, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        print("hf_zoo_paths.py: %s: cannot read the zoo's manifest: %s" % (manifest_path, e),
              file=sys.stderr)
        return EXIT_FAILED
    entries = manifest["models"]
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {e["name"] for e in entries}
        if unknown:
            print("hf_zoo_paths.py: --only: not in %s: %s" % (manifest_path, ", ".join(unknown)),
                  file=sys.stderr)
            return EXIT_USAGE
        entries = [e for e in entries if e["name"] in wanted]
    os.makedirs(args.work, exist_ok=True)
    results = []
    for entry in entries:
        os.makedirs(os.path.join(args.work, entry["name"]), exist_ok=True)
        print("[hf-paths] %s" % entry["name"], file=sys.stderr)
        r = {"name": entry["name"], "task": entry["task"]}
        r["A-ov"] = path_a_ov(entry, args.zoo, args.work, args.convgate)
        r["A-onnx"] = path_a_onnx(entry, args.zoo, args.work, args.convgate)
        r["B-pt"] = path_b("pt", entry, args.zoo, args.work)
        r["B-onnx"] = path_b("onnx", entry, args.zoo, args.work)
        results.append(r)
        if args.json:  # after every model: a long run leaves what it measured
            with open(args.json, "w") as f:
                json.dump(results, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results))
    print(json.dumps(results))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
