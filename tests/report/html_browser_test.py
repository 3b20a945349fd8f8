#!/usr/bin/python3
"""The HTML report in a real browser: headless Chromium (Debian's) renders the pages convgate
writes, with the network cut (unshare -n), and the test checks the DOM for the charts, rows and
marks, the console for errors, and the screenshot for pixels; the Markdown summary for its size.

Usage: html_browser_test.py BUILD_DIR [--screenshot-to PATH]
(--screenshot-to: also keep the per-node failure report's screenshot there, as docs/ shows it)
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONVGATE = os.path.join(BUILD, "src/cli/convgate")
EXAMPLES = os.path.join(BUILD, "examples")
SHOT_TO = sys.argv[sys.argv.index("--screenshot-to") + 1] if "--screenshot-to" in sys.argv else None
DEADLINE = 120  # seconds per browser run, generous for a loaded machine

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        failures.append(what)


def convgate(*args):
    run = subprocess.run([CONVGATE, *args], capture_output=True, text=True, timeout=600)
    return run


def chromium(page, work, *mode):
    """Chromium on `page` offline; returns (stdout, stderr)."""
    browser = shutil.which("chromium")
    if browser is None:
        sys.exit("chromium is not installed: ./scripts/setup.sh installs it")
    argv = ["unshare", "-n", browser, "--headless", "--no-sandbox", "--disable-gpu",
            "--user-data-dir=" + os.path.join(work, "profile"), "--virtual-time-budget=2000",
            "--enable-logging=stderr", "--v=0", *mode, "file://" + page]
    try:
        run = subprocess.run(argv, capture_output=True, text=True, timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        sys.exit("chromium did not finish rendering %s within %d s" % (page, DEADLINE))
    return run.stdout, run.stderr


def console_errors(stderr):
    """The page's console errors and uncaught exceptions as Chromium logs them."""
    return [line for line in stderr.splitlines()
            if "CONSOLE" in line and ("Uncaught" in line or "ERROR" in line or "Error" in line)]


def non_white_fraction(png):
    from PIL import Image  # python3-pil (Debian), installed by the set-up
    image = Image.open(png).convert("RGB")
    pixels = image.getdata()
    dark = sum(1 for (r, g, b) in pixels if r + g + b < 720)
    return dark / float(len(pixels))


def per_node_failure(work):
    out = os.path.join(work, "pn")
    html = os.path.join(work, "pn.html")
    md = os.path.join(work, "pn.md")
    run = convgate("compare", os.path.join(EXAMPLES, "tinycnn.onnx"),
                   os.path.join(EXAMPLES, "tinycnn_perturbed.onnx"), "--per-node", "--out", out,
                   "--html", html, "--markdown", md)
    check(run.returncode == 1, "compare --per-node of a perturbed model fails (exit %d)" % run.returncode)
    check(("wrote " + html) in run.stdout, "the console says where the HTML report went")
    dom, stderr = chromium(html, work, "--dump-dom")
    check("class=\"verdict fail\"" in dom, "the verdict FAIL is on the page")
    check(dom.count("<svg class=\"chart line-chart") == 1, "one divergence curve")
    check("class=\"mark culprit\"" in dom and "culprit: Gemm_logits" in dom,
          "the culprit Gemm_logits is marked on the curve")
    check("class=\"mark first-divergence\"" in dom, "the first divergence is marked")
    check("class=\"threshold\"" in dom, "the tolerance line is drawn")
    nodes = re.search(r"<table class=\"sortable nodes\">.*?</table>", dom, re.S)
    check(nodes is not None and nodes.group(0).count("<tr") == 8,
          "the node table has a header and 7 nodes")
    check(dom.count("<svg class=\"chart bar-chart") == 2, "an error distribution per output")
    check("atol 1e-05: below every bin" in dom,
          "a distribution says where the tolerance lies when no bin holds it")
    check(dom.count("<svg class=\"chart heatmap") == 2, "a confusion heatmap per classifier output")
    check("top-1 agreement 100% (1 of 1 rows)" in dom, "the top-1 agreement is stated")
    check(not console_errors(stderr), "no console errors: %s" % console_errors(stderr)[:3])
    shot = os.path.join(work, "pn.png")
    chromium(html, work, "--window-size=1200,1400", "--screenshot=" + shot)
    check(os.path.exists(shot) and non_white_fraction(shot) > 0.02,
          "the screenshot is not blank")
    if SHOT_TO and os.path.exists(shot):
        shutil.copyfile(shot, SHOT_TO)
    lines = open(md, encoding="utf-8").read().splitlines()
    check(0 < len(lines) < 60, "the Markdown summary is under 60 lines (%d)" % len(lines))
    text = "\n".join(lines)
    check("❌ FAIL" in text and "**Culprit:** `Gemm_logits`" in text,
          "the Markdown names the verdict and the culprit")
    check("| logits |" in text and "atol to pass" in text,
          "the Markdown tables the failing outputs with the tolerances that pass")
    # `convgate report` renders the saved folder the same way.
    again = os.path.join(work, "again.html")
    run = convgate("report", out, "--html", again)
    check(run.returncode == 0, "convgate report renders the result folder (exit %d)" % run.returncode)
    check(os.path.exists(again) and open(again).read() == open(html).read(),
          "convgate report writes the page the compare wrote")
    printed = convgate("report", out)
    check(printed.returncode == 0 and printed.stdout == open(md, encoding="utf-8").read(),
          "convgate report prints the Markdown when no file is asked for")


def batch_grid(work):
    manifest = os.path.join(work, "m.yaml")
    with open(manifest, "w") as f:
        f.write("models:\n")
        for id_, target in (("good", "tinycnn_converted.onnx"), ("perturbed", "tinycnn_perturbed.onnx")):
            f.write("  - id: %s\n    source: %s\n    target: %s\n" %
                    (id_, os.path.join(EXAMPLES, "tinycnn.onnx"), os.path.join(EXAMPLES, target)))
        f.write("  - id: missing\n    source: %s\n    to: fp16\n" % os.path.join(work, "nope.onnx"))
    out = os.path.join(work, "batch")
    convgate("batch", manifest, "--out", out)
    html = os.path.join(work, "batch.html")
    run = convgate("report", out, "--html", html)
    check(run.returncode == 0, "convgate report renders a batch folder (exit %d)" % run.returncode)
    dom, stderr = chromium(html, work, "--dump-dom")
    grid = re.search(r"<table class=\"sortable grid\">.*?</table>", dom, re.S)
    check(grid is not None and grid.group(0).count("<tr") == 4,
          "the grid has a header and a row per model")
    check(grid is not None and "verdict-cell fail" in grid.group(0) and "missing-file" in grid.group(0),
          "the grid shows the failure and the error's category")
    check("Errors by category" in dom, "errors by category are listed")
    job_page = os.path.join(out, "perturbed", "report.html")
    check(os.path.exists(job_page) and ("href=\"file://" + job_page + "\"") in dom,
          "each job gets its own page, which the grid links to")
    junit = os.path.join(work, "all.xml")
    run = convgate("report", out, "--junit", junit)
    xml = open(junit).read() if os.path.exists(junit) else ""
    check(run.returncode == 0 and xml.count("<testsuites>") == 1 and
          "tinycnn_converted" in xml and "tinycnn_perturbed" in xml,
          "report --junit gathers every job's test suite into one file (exit %d, %d suites): %s"
          % (run.returncode, xml.count("<testsuite "), run.stderr[-300:]))
    check(not console_errors(stderr), "no console errors on the batch page")
    # The same entries again into the same store, "good" now converted badly: a regression.
    with open(manifest, "w") as f:
        f.write("models:\n")
        for id_, target in (("good", "tinycnn_perturbed.onnx"), ("perturbed", "tinycnn_perturbed.onnx")):
            f.write("  - id: %s\n    source: %s\n    target: %s\n" %
                    (id_, os.path.join(EXAMPLES, "tinycnn.onnx"), os.path.join(EXAMPLES, target)))
    store = os.path.join(out, "convgate.db")
    convgate("batch", manifest, "--out", os.path.join(work, "batch2"), "--store", store)
    page = os.path.join(work, "store.html")
    run = convgate("report", "--store", store, "--since", "1d", "--html", page)
    check(run.returncode == 0, "convgate report --store renders the store (exit %d)" % run.returncode)
    dom, stderr = chromium(page, work, "--dump-dom")
    check("regression: passed before" in dom, "the entry that passed and now fails is marked: %s"
          % re.sub(r"<[^>]+>", " ", dom)[-600:])
    check(dom.count("<svg class=\"sparkline\"") >= 6, "each series has its sparklines")
    trend = re.search(r"<table class=\"sortable trend\">.*?</table>", dom, re.S)
    check(trend is not None and trend.group(0).count("class=\"run ") >= 5,
          "each series shows its verdict per run")
    check(not console_errors(stderr), "no console errors on the store page")
    first = convgate("report", "--store", store, "--run", "1")
    check(first.returncode == 0 and "no regression" in first.stdout,
          "report --store --run 1 renders the first run alone (no regression yet)")
    none = convgate("report", "--store", store, "--run", "99")
    check(none.returncode == 3 and "has no job of run 99" in none.stderr,
          "a run the store does not have is exit 3 naming it (exit %d)" % none.returncode)
    summary = convgate("report", "--store", store)
    check(summary.returncode == 0 and "1 regressed" in summary.stdout and "| good |" in summary.stdout,
          "the Markdown of the store names the regression")
    bad = convgate("report", os.path.join(work, "nothing-here"))
    check(bad.returncode == 3 and "nothing-here" in bad.stderr,
          "a missing RESULT is exit 3 naming it (exit %d)" % bad.returncode)


def pipeline_grid(work):
    """The recurrent example (examples/pipeline) over 20 steps: its fp16-state target drifts."""
    found = subprocess.run([os.path.join(SOURCE, "scripts", "make_pipeline_fixtures.sh")],
                           capture_output=True, text=True)
    if found.returncode != 0:
        print("skip the pipeline page: no pipeline fixtures (a build without libtorch)")
        return
    models = found.stdout.strip().splitlines()[-1]
    folder = os.path.join(work, "pipeline")
    shutil.copytree(models, folder)
    shutil.copy(os.path.join(SOURCE, "examples", "pipeline", "recurrent.yaml"), folder)
    html = os.path.join(work, "pipeline.html")
    run = subprocess.run([CONVGATE, "pipeline", "recurrent.yaml", "--steps", "20", "--html", html],
                         cwd=folder, capture_output=True, text=True, timeout=600)
    check(run.returncode == 1, "the recurrent pipeline's drifting target fails (exit %d)" % run.returncode)
    dom, stderr = chromium(html, work, "--dump-dom")
    grid = re.search(r"<table class=\"steps\">.*?</table>", dom, re.S)
    check(grid is not None and grid.group(0).count("<th>") == 21,
          "the node x step grid has a column per step")
    check(grid is not None and "rnn (replay)" in grid.group(0) and "pipeline outputs" in grid.group(0),
          "the grid has the node's rows and the outputs' row")
    check(grid is not None and "step fail" in grid.group(0) and "step pass" in grid.group(0),
          "the grid shows the steps that pass and those that fail")
    check(not console_errors(stderr), "no console errors on the pipeline page")


def main():
    work = tempfile.mkdtemp(prefix="convgate_html_")
    try:
        per_node_failure(work)
        batch_grid(work)
        pipeline_grid(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d checks failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
