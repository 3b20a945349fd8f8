"""The gate's functions. Models run and tensors are compared by the C++ engine in this process,
with the GIL released; what the command line would print is captured into the Report."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _convgate
from ._errors import UsageError, error_for
from ._policy import policy_flags
from ._report import Report

_convgate.set_error_factory(error_for)

PathLike = Union[str, os.PathLike]
ArrayDict = Mapping[str, Any]


def version() -> str:
    """"0.1.0 (0123456789ab)": the engine's version and commit."""
    return _convgate.version()


# ---------------------------------------------------------------- arrays


def _as_array(value: Any, where: str):
    """`value` as something the engine views without a copy: a numpy array or a CPU torch tensor
    as they are (made C-contiguous only when they are not), anything else through numpy."""
    module = type(value).__module__
    if module.startswith("torch"):
        if value.device.type != "cpu":
            raise UsageError("%s is a torch tensor on %s: convgate compares host memory; move it "
                             "with .cpu()" % (where, value.device), 2)
        value = value.detach()
        return value if value.is_contiguous() else value.contiguous()
    import numpy as np

    if isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__dlpack__"):  # JAX, CuPy on the host, ...: viewed, not copied
        try:
            array = np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError) as error:
            raise UsageError("%s: its DLPack export failed (%s)" % (where, error), 2) from None
    else:
        array = np.asarray(value)  # __array__, buffers, nested lists
    if array.dtype == object or array.dtype.kind in "USV":
        raise UsageError("%s holds %s elements: compare_arrays takes numeric and bool arrays"
                         % (where, array.dtype), 2)
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def _samples(value: Any, side: str, default_name: str) -> List[List[Tuple[str, Any]]]:
    """One sample (an array, or a dict of arrays) or several (a list of dicts)."""
    if isinstance(value, Mapping):
        return [[(str(name), _as_array(array, "%s[%r]" % (side, name)))
                 for name, array in value.items()]]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
        samples = []
        for i, sample in enumerate(value):
            samples.append([(str(name), _as_array(array, "%s[%d][%r]" % (side, i, name)))
                            for name, array in sample.items()])
        return samples
    return [[(default_name, _as_array(value, side))]]


def _agreement_flags(agreement, classifiers, top_k) -> List[str]:
    args: List[str] = []
    if isinstance(agreement, str):
        agreement = [agreement]
    for check in agreement or []:
        args += ["--agreement", check]
    if isinstance(classifiers, str):
        classifiers = [classifiers]
    for name in classifiers or []:
        args += ["--classifier", name]
    if top_k is not None:
        args += ["--top-k", str(top_k)]
    return args


def compare_arrays(expected: Any, actual: Any, *, policy=None, agreement=None,
                   classifiers=None, top_k: Optional[int] = None,
                   names: Tuple[str, str] = ("expected", "actual")) -> Report:
    """Compares outputs you already hold, as ``compare`` compares a model's.

    expected, actual: an array (named "output"), a dict of named arrays, or a list of such dicts
    (one per sample). numpy arrays and CPU torch tensors are read where they lie, without a copy
    (a non-contiguous one is made contiguous first); anything numpy can view works too.
    policy: a Policy, a dict of its keywords, or a policy YAML path. agreement: checks such as
    "logits:top1>=0.99"; classifiers: outputs to read as class scores or labels.
    Returns the Report; raises UsageError for a bad policy or an array convgate cannot compare.
    """
    flags = policy_flags(policy) + _agreement_flags(agreement, classifiers, top_k)
    source = _samples(expected, names[0], "output")
    target = _samples(actual, names[1], "output")
    code, report, verify_result, junit, console = _convgate.compare_arrays(
        source, target, flags, names[0], names[1])
    return Report(json.loads(report), json.loads(verify_result), junit, console)


# ---------------------------------------------------------------- commands


class _Staging:
    """A temporary folder for what a command reads (arrays written as .npz) and writes (--out)."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="convgate-py-")

    def npz(self, name: str, value: Any) -> str:
        """`value` (a dict of arrays, or a list of them: samples) as an .npz; returns its path."""
        samples = _samples(value, name, "output")
        if len(samples) == 1:
            arrays = samples[0]
        else:
            arrays = [("sample_%d/%s" % (i, key), array)
                      for i, sample in enumerate(samples) for key, array in sample]
        path = os.path.join(self.path, name + ".npz")
        _convgate.write_npz(path, arrays)
        return path

    def side(self, value: Any, name: str) -> str:
        if isinstance(value, (str, os.PathLike)):
            return os.fspath(value)
        return self.npz(name, value)

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


def _run(args: Sequence[str], staging: _Staging, out: Optional[PathLike]) -> Report:
    results = os.path.join(staging.path, "results")
    code, printed, errors = _convgate.run_command(list(args) + ["--out", results])
    report = None
    if os.path.exists(os.path.join(results, "report.json")):
        report = Report.load(results)
        # Not the staging folder, which is gone once this returns.
        report.console = "".join(line for line in printed.splitlines(keepends=True)
                                 if not line.startswith("results in "))
        if out is not None:
            report.write(out)
    if code in (0, 1) and report is not None:
        return report
    message = errors.strip() or printed.strip() or "convgate exited with %d" % code
    raise error_for(message, code, report)


def _data_flags(inputs, samples: int, seed: int, staging: _Staging) -> List[str]:
    if inputs is not None:
        path = inputs if isinstance(inputs, (str, os.PathLike)) else staging.npz("inputs", inputs)
        return ["--load-inputs", os.fspath(path)]
    return ["--samples", str(samples), "--seed", str(seed)]


def compare(source: Union[PathLike, ArrayDict], target: Union[PathLike, ArrayDict], *,
            inputs=None, policy=None, samples: int = 1, seed: int = 1, per_node: bool = False,
            agreement=None, classifiers=None, flags: Iterable[str] = (),
            out: Optional[PathLike] = None) -> Report:
    """``convgate compare``: both sides on the same inputs, every output under the policy.

    source, target: model paths or folders (.onnx, .pt, OpenVINO .xml, a Hugging Face folder),
    hf://org/name/file ids, saved outputs (.npz), or dicts of arrays (saved outputs, given with
    `inputs`). inputs: a dict of arrays (one sample), a list of dicts (samples), or an .npz path;
    None: generated (`samples`, `seed`). per_node: also compare every intermediate tensor and
    name the first divergence and the culprit. flags: any other compare flag, as on the command
    line (e.g. ["--dim", "batch=2"]). out: also write the result files there.
    """
    staging = _Staging()
    try:
        args = ["compare", staging.side(source, "source"), staging.side(target, "target")]
        args += _data_flags(inputs, samples, seed, staging)
        args += policy_flags(policy) + _agreement_flags(agreement, classifiers, None)
        if per_node:
            args.append("--per-node")
        args += list(flags)
        return _run(args, staging, out)
    finally:
        staging.close()


def run(model: PathLike, *, inputs=None, samples: int = 1, seed: int = 1,
        flags: Iterable[str] = (), out: Optional[PathLike] = None) -> Report:
    """``convgate run``: the model on its inputs, every output checked for being non-empty,
    finite and of the declared dtype and shape."""
    staging = _Staging()
    try:
        args = ["run", os.fspath(model)] + _data_flags(inputs, samples, seed, staging)
        return _run(args + list(flags), staging, out)
    finally:
        staging.close()


def verify(source: PathLike, *, to: Optional[str] = None, target: Optional[PathLike] = None,
           params: Optional[Mapping[str, Any]] = None, inputs=None, policy=None,
           samples: int = 1, seed: int = 1, flags: Iterable[str] = (),
           out: Optional[PathLike] = None) -> Report:
    """``convgate verify``: converts `source` (``to``: "fp16", "opset:17", "openvino", ...) or
    takes a converted `target`, then runs the sanity gate on it and compares it with the source.
    ``report.verify_result`` is verify_result.json's document."""
    staging = _Staging()
    try:
        args = ["verify", os.fspath(source)]
        if to is not None:
            args += ["--to", to]
        if target is not None:
            args += ["--target", os.fspath(target)]
        for name, value in (params or {}).items():
            args += ["--param", "%s=%s" % (name, value)]
        args += _data_flags(inputs, samples, seed, staging) + policy_flags(policy)
        return _run(args + list(flags), staging, out)
    finally:
        staging.close()


def convert(source: PathLike, to: str, output: PathLike, *,
            params: Optional[Mapping[str, Any]] = None, flags: Iterable[str] = ()) -> str:
    """``convgate convert``: `source` converted by kind `to` ("fp16", "opset:17", ...) into
    `output`. Returns the output path; raises Error when the conversion fails."""
    args = ["convert", os.fspath(source), "--to", to, "-o", os.fspath(output)]
    for name, value in (params or {}).items():
        args += ["--param", "%s=%s" % (name, value)]
    code, printed, errors = _convgate.run_command(args + list(flags))
    if code != 0:
        raise error_for(errors.strip() or printed.strip() or "convert exited with %d" % code, code)
    return os.fspath(output)


def check(report: Union[Report, PathLike], policy=None, *, flags: Iterable[str] = ()) -> Report:
    """``convgate check``: a report judged again under another policy, nothing run again.
    report: a Report, a results folder or a report.json."""
    staging = _Staging()
    try:
        path = report
        if isinstance(report, Report):
            path = report.write(os.path.join(staging.path, "given"))
        args = ["check", os.fspath(path)] + policy_flags(policy) + list(flags)
        return _run(args, staging, None)
    finally:
        staging.close()
