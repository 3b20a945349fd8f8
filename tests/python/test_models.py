"""The model-based functions from Python: compare, run, verify, convert and check, in-process, on
the build's example models and on a PyTorch -> ONNX export gated in the same script."""

import os

import numpy as np
import pytest

import convgate
from conftest import EXAMPLES

TINYCNN = os.path.join(EXAMPLES, "tinycnn.onnx")
PERTURBED = os.path.join(EXAMPLES, "tinycnn_perturbed.onnx")


def test_compare_names_the_culprit_per_node(tmp_path):
    report = convgate.compare(TINYCNN, PERTURBED, samples=2, per_node=True, out=tmp_path / "r")
    assert not report.passed and report.exit_code == 1
    assert report.culprit["node"] == "Gemm_logits"
    assert report.first_divergence is not None
    assert sorted(report.samples) == [0, 1]
    assert os.path.exists(tmp_path / "r" / "report.json")
    assert "culprit" in repr(report).lower() or "Gemm_logits" in repr(report)


def test_compare_takes_inputs_as_arrays():
    x = np.random.default_rng(3).random((1, 3, 16, 16), dtype=np.float32)
    same = convgate.compare(TINYCNN, TINYCNN, inputs={"image": x})
    assert same.passed
    assert same.data["inputs"]["samples"] == 1
    several = convgate.compare(TINYCNN, TINYCNN, inputs=[{"image": x}, {"image": x * 0.5}])
    assert several.passed and sorted(several.samples) == [0, 1]


def test_run_and_check():
    assert convgate.run(TINYCNN, samples=2).passed
    failed = convgate.compare(TINYCNN, PERTURBED)
    assert not failed.passed
    rejudged = convgate.check(failed, convgate.Policy(atol=0.1))
    assert rejudged.passed


def test_verify_and_convert(tmp_path):
    out = convgate.convert(TINYCNN, "opset:17", tmp_path / "tiny17.onnx")
    assert os.path.exists(out)
    report = convgate.verify(TINYCNN, target=out)
    assert report.passed and report.verify_result["verify_passed"] is True


def test_bad_input_raises_with_the_category(tmp_path):
    with pytest.raises(convgate.CannotRunError) as missing:
        convgate.compare(str(tmp_path / "nope.onnx"), TINYCNN)
    assert missing.value.exit_code == 3 and "nope.onnx" in str(missing.value)
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(open(TINYCNN, "rb").read()[:200])
    with pytest.raises(convgate.CannotRunError) as broken:
        convgate.compare(TINYCNN, str(truncated))
    assert "truncated.onnx" in str(broken.value) and broken.value.report is not None
    with pytest.raises(convgate.CannotRunError):
        convgate.compare(TINYCNN, TINYCNN, inputs={"image": np.zeros((1, 3, 16, 16), np.int64)})
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(convgate.Error) as bad_npz:
        convgate.compare(TINYCNN, TINYCNN, inputs=str(corrupt))
    assert "corrupt.npz" in str(bad_npz.value)
    with pytest.raises(convgate.UsageError):
        convgate.compare(TINYCNN, TINYCNN, flags=["--no-such-flag"])


def test_a_pytorch_export_gated_in_process(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4)).eval()
    x = torch.randn(2, 16)
    path = str(tmp_path / "mlp.onnx")
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"], dynamo=False)
    with torch.no_grad():
        expected = model(x)
    report = convgate.compare({"y": expected}, path, inputs={"x": x})
    assert report.passed, report
    assert report.output("y").max_abs_error < 1e-5
    # A wrong export (a weight changed after exporting) is caught.
    with torch.no_grad():
        model[0].weight[0, 0] += 0.5
        changed = model(x)
    assert not convgate.compare({"y": changed}, path, inputs={"x": x}).passed


def test_the_readme_example_runs_as_printed(tmp_path, monkeypatch):
    """README.md's "From Python" example, exactly as printed, in a fresh folder."""
    pytest.importorskip("torch")
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "README.md")
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("## From Python"):]
    example = section[section.index("```python\n") + len("```python\n"):]
    example = example[:example.index("```")]
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "README.md (From Python)", "exec"), {})
    assert (tmp_path / "results" / "report.json").exists()
