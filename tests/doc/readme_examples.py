#!/usr/bin/python3
"""Runs every command the README and docs/*.md show, exactly as printed, on the bundled models.

Each ```sh block of README.md, then of each docs/*.md file in the order given, is read in order
(one sandbox for them all, so a later document may use what an earlier one wrote); every line that runs convgate (or one of the
project's own tools and scripts it documents) is run with bash in one sandbox folder, where the
file names the examples use exist: model.onnx is the bundled tinycnn, perturbed.onnx a copy with
one weight changed, converted.onnx its faithful
conversion, resnet18.pt the cached torchvision fixture, inputs.npz and expected.npz come from
convgate itself, and so on. State flows from line to line as a reader's would (the `check` lines
read the report the `compare` line above them wrote).

An example passes when it exits 0 or 1 (a verdict: the gate ran), or exactly 0 / 1 when its
comment says PASS / FAIL; 2 (usage), 3 (cannot run) or 4 (internal) mean the README is wrong.
Lines that run something other than convgate (set-up, cmake, ctest) are listed and not run; an
example that cannot run on this machine is skipped only by name below, with the reason, and
counted as skipped, never as passed.

Usage: readme_examples.py BUILD_DIR SOURCE_DIR [--with-torch] README.md [docs/X.md ...]
(--with-torch: the torchvision fixtures exist; scripts/make_torch_fixtures.sh names their folder)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

# Programs whose examples are run. Anything else (./scripts/setup.sh, cmake, ctest) is not an
# example of using convgate: it is listed and not run.
RUN_PREFIXES = ("convgate ", "build/src/cli/convgate ", "build/convgate-", "/usr/bin/python3 tests/")

# Examples that cannot run here, by a fragment of their text, with the reason. Never a pass.
SKIPPED = {
    "openvino_runner.py": "runs python3 from PATH, which has no openvino (the venv has; the "
                          "openvino backend example runs instead)",
    "--slurm": "needs a Slurm cluster and a PostgreSQL server (tests/cli/slurm_cli_test.cc runs "
               "--slurm on a real single-host cluster)",
    "@db.example/": "needs a PostgreSQL server at db.example (batch_postgres_cli_test runs the "
                    "same commands against the throwaway cluster of the postgres tests)",
    "compare src.npz tgt.npz": "compares generations the lines above it write with the venv's "
                               "python and optimum-cli (not run here; the hf tests run "
                               "hf_generate.py on the zoo)",
}

PASS_WORDS = re.compile(r"#.*\bPASS\b")
FAIL_WORDS = re.compile(r"#.*\bFAIL\b")


def sh_blocks(document):
    text = open(document, encoding="utf-8").read()
    return [m.group(1) for m in re.finditer(r"```sh\n(.*?)```", text, re.S)]


def commands(block):
    """Joins backslash-continued lines; yields each command line with its comment."""
    pending = ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        if full:
            yield full


def expected_codes(line):
    if PASS_WORDS.search(line):
        return {0}
    if FAIL_WORDS.search(line):
        return {1}
    return {0, 1}


def run(cmd, cwd, env, timeout=900):
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def must(cmd, cwd, env):
    result = run(cmd, cwd, env)
    if result.returncode != 0:
        sys.exit(f"sandbox set-up failed: {cmd}\n{result.stdout}\n{result.stderr}")


def make_sandbox(sandbox, build, source, fixtures, env):
    """The files the README's examples name, made from the bundled models by convgate itself."""
    for name in ("build", "examples", "tests", "scripts", "runtime"):
        os.symlink(build if name == "build" else os.path.join(source, name),
                   os.path.join(sandbox, name))
    examples = os.path.join(build, "examples")
    shutil.copy(os.path.join(examples, "tinycnn.onnx"), os.path.join(sandbox, "model.onnx"))
    for name in ("model_converted.onnx", "converted.onnx", "converted_v1.onnx",
                 "converted_v2.onnx"):
        shutil.copy(os.path.join(examples, "tinycnn_converted.onnx"), os.path.join(sandbox, name))
    shutil.copy(os.path.join(examples, "tinycnn_perturbed.onnx"),
                os.path.join(sandbox, "perturbed.onnx"))
    if fixtures:
        for name in ("resnet18.pt", "resnet18.onnx"):
            os.symlink(os.path.join(fixtures, name), os.path.join(sandbox, name))
        # The pipeline examples: the specs of examples/pipeline beside their models.
        script = os.path.join(source, "scripts", "make_pipeline_fixtures.sh")
        found = subprocess.run([script], capture_output=True, text=True, check=True)
        models = found.stdout.strip().splitlines()[-1]
        for name in os.listdir(models):
            os.symlink(os.path.join(models, name), os.path.join(sandbox, name))
        for name in os.listdir(os.path.join(source, "examples", "pipeline")):
            shutil.copy(os.path.join(source, "examples", "pipeline", name), sandbox)
    # The TensorFlow SavedModel example: the fixture's model and inputs, when the venv has
    # TensorFlow (make_tf_fixtures.sh fails otherwise, and the example is skipped).
    tf = subprocess.run([os.path.join(source, "scripts", "make_tf_fixtures.sh")],
                        capture_output=True, text=True)
    if tf.returncode == 0:
        folder = tf.stdout.strip().splitlines()[-1]
        for name in ("tiny_cnn", "tiny_cnn_inputs.npz"):
            os.symlink(os.path.join(folder, name), os.path.join(sandbox, name))
    steps = [
        "convgate convert model.onnx --to fp16 -o model_fp16.onnx --json >/dev/null",
        "convgate run model.onnx --samples 2 --save-inputs inputs.npz --save-outputs expected.npz",
        "cp expected.npz outputs.npz && cp expected.npz reference_outputs.npz",
        "convgate run converted.onnx --load-inputs inputs.npz --save-outputs candidate_outputs.npz",
        "convgate run model.onnx --save-inputs test_case_dir --save-outputs test_case_dir",
        "cp model.onnx test_case_dir/model.onnx",
        # Single saved outputs, as numpy users write them.
        "/usr/bin/python3 -c \"import numpy as np; "
        "np.save('reference_logits.npy', np.load('expected.npz')['sample_0/logits']); "
        "np.save('candidate_logits.npy', np.load('candidate_outputs.npz')['sample_0/logits'])\"",
        "printf 'atol: 1e-6\\nrtol: 1e-4\\n' > strict.yaml",
        # The converter of the --converter example: a program that copies its input.
        "mkdir -p bin && printf '#!/bin/sh\\n# my-converter --in SRC --out DST\\ncp \"$2\" \"$4\"\\n'"
        " > bin/my-converter && chmod +x bin/my-converter",
    ]
    for step in steps:
        must(step, sandbox, env)


def venv_has_openvino():
    """Whether the venv the openvino backend uses (CONVGATE_VENV, core/python_env.h) has it."""
    venv = os.environ.get("CONVGATE_VENV") or os.path.join(
        os.environ.get("CONVGATE_DEPS") or os.path.expanduser("~/.cache/convgate-deps"), "venv")
    python = os.path.join(venv, "bin", "python")
    return os.path.exists(python) and subprocess.run(
        [python, "-c", "import openvino"], capture_output=True).returncode == 0


def main():
    build, source = (os.path.abspath(arg) for arg in sys.argv[1:3])
    documents = [os.path.abspath(arg) for arg in sys.argv[3:] if arg != "--with-torch"]
    fixtures = None
    if "--with-torch" in sys.argv[3:]:
        script = os.path.join(source, "scripts", "make_torch_fixtures.sh")
        found = subprocess.run([script], capture_output=True, text=True, check=True)
        fixtures = found.stdout.strip().splitlines()[-1]
    openvino = venv_has_openvino()
    sandbox = tempfile.mkdtemp(prefix="convgate_readme_")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(
        [os.path.join(sandbox, "bin"), os.path.join(build, "src", "cli"), env.get("PATH", "")])
    env["CONVGATE_CACHE_DIR"] = os.path.join(sandbox, "cache")  # never the user's cache
    env["NO_COLOR"] = "1"
    # The README writes the venv as $CONVGATE_VENV (what setup.sh prints).
    env.setdefault("CONVGATE_VENV", os.path.join(
        env.get("CONVGATE_DEPS") or os.path.expanduser("~/.cache/convgate-deps"), "venv"))
    make_sandbox(sandbox, build, source, fixtures, env)
    passed, failed, skipped, not_examples = [], [], [], []
    blocks = [block for document in documents for block in sh_blocks(document)]
    for block in blocks:
        for line in commands(block):
            if not line.startswith(RUN_PREFIXES):
                not_examples.append(line)
                continue
            reason = next((why for key, why in SKIPPED.items() if key in line), None)
            if reason is None and "resnet18.pt" in line and not fixtures:
                reason = "built without libtorch: no torchvision fixture"
            if reason is None and ("pipeline " in line or "--feedback" in line) and not fixtures:
                reason = "built without libtorch: no pipeline fixtures (TorchScript sources)"
            if reason is None and "tiny_cnn " in line and not os.path.exists(
                    os.path.join(sandbox, "tiny_cnn")):
                reason = "the venv has no tensorflow-cpu (./scripts/setup.sh installs it)"
            if reason is None and "openvino" in line and not openvino:
                reason = "the venv has no openvino (./scripts/setup.sh makes it)"
            if reason:
                skipped.append((line, reason))
                continue
            result = run(line, sandbox, env)
            want = expected_codes(line)
            if result.returncode in want:
                passed.append(line)
            else:
                failed.append((line, result, want))
    for line, result, want in failed:
        print(f"FAILED (exit {result.returncode}, want {sorted(want)}): {line}")
        print("  stdout: " + result.stdout[-3000:].replace("\n", "\n  "))
        print("  stderr: " + result.stderr[-3000:].replace("\n", "\n  "))
    for line, reason in skipped:
        print(f"skipped: {line}\n  because {reason}")
    for line in not_examples:
        print(f"not a convgate example, not run: {line}")
    print(f"README and docs examples ({len(documents)} files): {len(passed)} passed, "
          f"{len(failed)} failed, {len(skipped)} skipped, "
          f"{len(not_examples)} other commands not run")
    if failed:
        print(f"sandbox kept for inspection: {sandbox}")
        return 1
    shutil.rmtree(sandbox, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
