#!/usr/bin/python3
"""Checks the tiny offline Hugging Face zoo and the greedy-generation runner (issue 12).

1. scripts/make_hf_zoo.sh builds the zoo (or finds it cached) and names its folder; manifest.json
   lists the ten models, each folder with config.json naming its architectures.
2. Every model folder loads with transformers through the class the manifest names, and its
   tokenizer (text models) decodes the manifest's input text back (special tokens around it).
3. runtime/hf_generate.py on gpt2 twice gives identical token ids and first-step logits, with
   token_ids int64 [1, prompt + 8] and first_step_logits float32 [1, vocab]; on t5 the token ids
   are [1, prompt + 8] too; on vit it saves logits.
4. hf_generate.py's errors: a folder without config.json is a usage error (exit 2) naming it.

Runs with Debian's python; the checks that import transformers run in the project's venv
($CONVGATE_VENV, default ${CONVGATE_DEPS:-~/.cache/convgate-deps}/venv, made by scripts/setup.sh).

Usage: hf_zoo_test.py SOURCE_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

MODEL_TYPES = {"bert", "t5", "gpt2", "vit", "clip", "whisper", "wav2vec2", "llama", "bert-cls",
               "bert-ner"}

# Run by the venv's python: loads every model of the manifest, prints one JSON line per model.
LOAD_CHECK = r"""
import json, os, sys
import transformers
from transformers import AutoTokenizer
transformers.logging.set_verbosity_error()
zoo = sys.argv[1]
with open(os.path.join(zoo, "manifest.json")) as f:
    manifest = json.load(f)
for entry in manifest["models"]:
    folder = os.path.join(zoo, entry["folder"])
    model = getattr(transformers, entry["model_class"]).from_pretrained(folder)
    line = {"name": entry["name"], "class": type(model).__name__,
            "parameters": sum(p.numel() for p in model.parameters())}
    if entry["tokenizer"] and "text" in entry["input"]:
        tok = AutoTokenizer.from_pretrained(folder)
        text = entry["input"]["text"]
        text = text[0] if isinstance(text, list) else text
        line["decoded"] = tok.decode(tok(text)["input_ids"])  # with [CLS], </s>, ... kept
        line["text"] = text
    print(json.dumps(line))
"""

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message)
    return condition


def run(cmd, **kwargs):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          **kwargs)


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    source = argv[0]
    deps = os.environ.get("CONVGATE_DEPS", os.path.expanduser("~/.cache/convgate-deps"))
    venv = os.environ.get("CONVGATE_VENV", os.path.join(deps, "venv"))
    python = os.path.join(venv, "bin", "python")
    if not os.access(python, os.X_OK):
        print("FAIL: no Python venv at %s (run scripts/setup.sh)" % venv)
        return 1
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

    # 1. the zoo
    proc = run([os.path.join(source, "scripts", "make_hf_zoo.sh")], env=env)
    if not check(proc.returncode == 0, "make_hf_zoo.sh exited %d: %s"
                 % (proc.returncode, proc.stderr[-2000:])):
        return 1
    zoo = proc.stdout.strip().splitlines()[-1]
    print("zoo: " + zoo)
    check(os.path.isfile(os.path.join(zoo, ".complete")), "%s: no .complete marker" % zoo)
    with open(os.path.join(zoo, "manifest.json")) as f:
        manifest = json.load(f)
    names = {e["name"] for e in manifest["models"]}
    check(names == MODEL_TYPES, "manifest.json lists %s, wanted %s" % (sorted(names),
                                                                        sorted(MODEL_TYPES)))
    for entry in manifest["models"]:
        with open(os.path.join(zoo, entry["folder"], "config.json")) as f:
            config = json.load(f)
        check(config.get("architectures") == entry["architectures"],
              "%s: config.json architectures %s, manifest %s"
              % (entry["name"], config.get("architectures"), entry["architectures"]))
        check(config.get("model_type") == entry["model_type"],
              "%s: model_type %s" % (entry["name"], config.get("model_type")))
        check(bool(entry.get("task")), "%s: no export task in the manifest" % entry["name"])

    # 2. every folder loads with transformers
    proc = run([python, "-c", LOAD_CHECK, zoo], env=env)
    check(proc.returncode == 0, "loading the zoo with transformers exited %d: %s"
          % (proc.returncode, proc.stderr[-3000:]))
    loaded = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    check({m["name"] for m in loaded} == names,
          "loaded %s of %s" % (sorted(m["name"] for m in loaded), sorted(names)))
    for m in loaded:
        print("loaded %-9s %-36s %7d parameters" % (m["name"], m["class"], m["parameters"]))
        if "text" in m:
            check(m["text"].lower().replace(" ", "") in m["decoded"].lower().replace(" ", ""),
                  "%s: tokenizer round trip %r -> %r" % (m["name"], m["text"], m["decoded"]))

    # 3. hf_generate.py is deterministic
    generate = os.path.join(source, "runtime", "hf_generate.py")
    with tempfile.TemporaryDirectory(prefix="hf-zoo-test.") as tmp:
        import_check = ("import numpy as np, sys\n"
                        "a, b = np.load(sys.argv[1]), np.load(sys.argv[2])\n"
                        "print(sorted(a.files), a['token_ids'].dtype, list(a['token_ids'].shape),"
                        " a['first_step_logits'].dtype, list(a['first_step_logits'].shape),"
                        " bool((a['token_ids'] == b['token_ids']).all()),"
                        " bool((a['first_step_logits'] == b['first_step_logits']).all()))\n")
        records = []
        for i in (1, 2):
            out = os.path.join(tmp, "gpt2-%d.npz" % i)
            proc = run([python, generate, "--model", os.path.join(zoo, "gpt2"), "--out", out],
                       env=env)
            if not check(proc.returncode == 0, "hf_generate.py gpt2 exited %d: %s"
                         % (proc.returncode, proc.stderr[-2000:])):
                return 1
            records.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        rec = records[0]
        print("gpt2: " + json.dumps(rec, sort_keys=True))
        check(rec["backend"] == "pytorch" and rec["task"] == "text-generation"
              and rec["new_tokens"] == 8, "gpt2 record: %s" % rec)
        proc = run([python, "-c", import_check, os.path.join(tmp, "gpt2-1.npz"),
                    os.path.join(tmp, "gpt2-2.npz")], env=env)
        vocab = json.load(open(os.path.join(zoo, "gpt2", "config.json")))["vocab_size"]
        want = "['first_step_logits', 'token_ids'] int64 [1, %d] float32 [1, %d] True True" % (
            rec["prompt_length"] + 8, vocab)
        check(proc.stdout.strip() == want, "gpt2 twice: got %r, wanted %r (stderr %s)"
              % (proc.stdout.strip(), want, proc.stderr[-1000:]))

        proc = run([python, generate, "--model", os.path.join(zoo, "t5"), "--out",
                    os.path.join(tmp, "t5.npz")], env=env)
        if check(proc.returncode == 0, "hf_generate.py t5 exited %d: %s"
                 % (proc.returncode, proc.stderr[-2000:])):
            rec = json.loads(proc.stdout.strip().splitlines()[-1])
            check(rec["task"] == "text2text-generation"
                  and rec["outputs"]["token_ids"]["shape"] == [1, rec["prompt_length"] + 8],
                  "t5 record: %s" % rec)
        proc = run([python, generate, "--model", os.path.join(zoo, "vit"), "--out",
                    os.path.join(tmp, "vit.npz")], env=env)
        if check(proc.returncode == 0, "hf_generate.py vit exited %d: %s"
                 % (proc.returncode, proc.stderr[-2000:])):
            rec = json.loads(proc.stdout.strip().splitlines()[-1])
            check(rec["outputs"] == {"logits": {"dtype": "float32", "shape": [1, 3]}},
                  "vit record: %s" % rec)

        # 4. errors
        proc = run([python, generate, "--model", tmp, "--out", os.path.join(tmp, "x.npz")],
                   env=env)
        check(proc.returncode == 2 and tmp in proc.stderr and "config.json" in proc.stderr,
              "a folder without config.json: exit %d, stderr %r" % (proc.returncode, proc.stderr))

    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
