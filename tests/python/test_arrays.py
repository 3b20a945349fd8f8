"""compare_arrays through the Python API: every statistic cross-checked with numpy, torch tensors,
no copies, and the errors a caller gets."""

import os
import subprocess
import sys

import numpy as np
import pytest

import convgate
from conftest import BUILD


def pair(n=10000, scale=1e-3, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    b = (a + rng.standard_normal(n) * scale).astype(dtype)
    return a, b


def close(x, y, rel=1e-6):
    assert x == pytest.approx(y, rel=rel, abs=1e-12), (x, y)


def test_every_statistic_agrees_with_numpy():
    a, b = pair()
    result = convgate.compare_arrays(a, b).output("output")
    s, t = a.astype(np.float64), b.astype(np.float64)
    d = np.abs(t - s)
    nonzero = np.abs(s) > 0
    rel = d[nonzero] / np.abs(s[nonzero])
    close(result.max_abs_error, d.max())
    close(result.mean_abs_error, d.mean())
    close(result.max_rel_error, rel.max())
    close(result.mean_rel_error, rel.mean(), rel=1e-4)
    for name, q in (("p50", 50), ("p75", 75), ("p90", 90), ("p99", 99), ("p99.5", 99.5)):
        close(result.percentiles[name], np.percentile(d, q), rel=1e-3)
    close(result.cosine, np.dot(s, t) / np.linalg.norm(s) / np.linalg.norm(t))
    close(result.rmse, np.sqrt(np.mean(d * d)))
    close(result.snr_db, 10 * np.log10(np.sum(s * s) / np.sum(d * d)), rel=1e-5)
    close(result.nmse, np.sum(d * d) / np.sum(s * s), rel=1e-5)
    allowed = 1e-5 + 1e-3 * np.abs(s)
    assert result.mismatches == int(np.count_nonzero(d > allowed))
    assert result.num_elements == a.size
    # The element exceeding its allowance by the largest factor, and the tolerances that pass.
    assert result.worst_element["flat_index"] == int(np.argmax(d / allowed))
    close(result.atol_to_pass, max((d - 1e-3 * np.abs(s)).max(), 0.0))
    close(result.rtol_to_pass, max(((d - 1e-5)[nonzero] / np.abs(s[nonzero])).max(), 0.0))


def test_verdict_follows_the_policy():
    a, b = pair(scale=1e-3)
    assert not convgate.compare_arrays(a, b).passed
    loose = convgate.compare_arrays(a, b, policy=convgate.Policy(atol=1e-2))
    assert loose.passed and loose.exit_code == 0
    by_dict = convgate.compare_arrays({"y": a}, {"y": b}, policy={"per_output": {"y": {"atol": 1e-2}}})
    assert by_dict.passed
    assert convgate.Policy(atol=1e-2, per_output={"y": {"rtol": 0.1}}).flags() == [
        "--atol", "0.01", "--rtol", "y:0.1"]


def test_samples_and_names():
    a, b = pair(100)
    report = convgate.compare_arrays([{"x": a}, {"x": a}], [{"x": a}, {"x": b}],
                                     policy=convgate.Policy(atol=1e-6))
    assert not report.passed
    assert sorted(report.samples) == [0, 1]
    assert report.output("x", sample=0).passed and not report.output("x", sample=1).passed
    missing = convgate.compare_arrays({"x": a, "z": a}, {"x": a})
    assert not missing.passed
    assert any("missing" in f for f in missing.output("z").failures)


def test_agreement_on_class_scores():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((64, 10)).astype(np.float32)
    flipped = logits.copy()
    flipped[0] = -flipped[0]
    report = convgate.compare_arrays({"logits": logits}, {"logits": flipped},
                                     policy=convgate.Policy(atol=100), agreement="logits:top1>=1")
    assert not report.passed
    assert report.agreements[0]["output"] == "logits"


def test_torch_tensors_in():
    torch = pytest.importorskip("torch")
    x = torch.randn(8, 16, requires_grad=True)
    y = x.detach().clone()
    y[3, 4] += 1.0
    report = convgate.compare_arrays({"t": x}, {"t": y})
    result = report.output("t")
    assert not report.passed and result.mismatches == 1
    assert result.worst_element["index"] == [3, 4]
    assert convgate.compare_arrays(x.T, y.T.contiguous()).output("output").mismatches == 1
    half = convgate.compare_arrays(x.detach().half(), x.detach().half())
    assert half.passed and "float16" in half.output("output").stats["source"]
    bf16 = convgate.compare_arrays(x.detach().bfloat16(), x.detach().bfloat16())
    assert bf16.passed and "bfloat16" in bf16.output("output").stats["source"]


def test_errors_are_exceptions_with_the_exit_code_category():
    a, b = pair(10)
    with pytest.raises(convgate.UsageError) as bad_policy:
        convgate.compare_arrays(a, b, policy=convgate.Policy(atol=-1))
    assert bad_policy.value.exit_code == 2 and "--atol" in str(bad_policy.value)
    with pytest.raises(convgate.UsageError):
        convgate.compare_arrays(np.array(["a", "b"]), np.array(["a", "b"]))
    with pytest.raises(convgate.UsageError):
        convgate.compare_arrays(a, b, policy=convgate.Policy(per_output={"y": {"atoll": 1}}))
    with pytest.raises(convgate.UsageError):
        convgate.compare_arrays(a, b, agreement="logits:top0>=1")
    with pytest.raises(convgate.UsageError):
        convgate.compare_arrays(a, b, policy=42)
    with pytest.raises(convgate.UsageError):
        convgate.compare_arrays(np.zeros(2, np.complex64), np.zeros(2, np.complex64))


def test_write_and_html(tmp_path):
    a, b = pair(100)
    report = convgate.compare_arrays(a, b)
    folder = report.write(tmp_path / "out")
    assert sorted(os.listdir(folder)) == ["junit.xml", "report.json", "verify_result.json"]
    again = convgate.Report.load(folder)
    assert again.verdict == report.verdict and again.data == report.data
    assert report._repr_html_().startswith("<!DOCTYPE html>")
    assert "FAIL" in repr(report) and "FAIL" in report.markdown()


NO_COPY = r"""
import numpy as np, convgate
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
convgate.compare_arrays(np.zeros(1000, np.float32), np.zeros(1000, np.float32))  # warm
before = status("VmRSS:")
n = 16 * 1024 * 1024
a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
b = a + np.float32(1e-4)
open("/proc/self/clear_refs", "w").write("5")  # VmHWM restarts from here
report = convgate.compare_arrays(a, b)
assert report.output("output").num_elements == n
print((status("VmHWM:") - before) / float(a.nbytes + b.nbytes))
"""


def test_no_array_is_copied():
    # A process of its own, so the peak is this comparison's alone.
    env = dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python"))
    run = subprocess.run([sys.executable, "-c", NO_COPY], capture_output=True, text=True,
                         env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    ratio = float(run.stdout.strip().splitlines()[-1])
    assert ratio <= 1.2, "peak memory %.2fx the two arrays (a copy?)" % ratio


class OnlyDlpack:
    """An array from some other library: it speaks DLPack and nothing else."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class OnlyArrayInterface:
    def __init__(self, array):
        self._array = array

    def __array__(self, dtype=None, copy=None):
        return self._array


def test_dlpack_and_array_protocol_objects():
    a, b = pair(1000)
    direct = convgate.compare_arrays(a, b).output("output")
    for wrap in (OnlyDlpack, OnlyArrayInterface):
        result = convgate.compare_arrays(wrap(a), wrap(b)).output("output")
        assert result.max_abs_error == direct.max_abs_error and result.mismatches == direct.mismatches
