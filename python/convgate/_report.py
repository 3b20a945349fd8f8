"""Report: what a gate found, as report.json records it, with the files --out writes."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Union


class OutputResult:
    """One output of one sample: its verdict and every statistic report.json records.

    ``stats`` is the whole record (``stats["errors"]``, ``stats["metrics"]``, ...); the common
    figures are properties. Absent figures (a side lacked the output, a non-numeric output) are
    None.
    """

    def __init__(self, record: Dict[str, Any]):
        self.record = record
        self.stats: Dict[str, Any] = record.get("stats") or {}

    sample = property(lambda self: self.record.get("sample", 0))
    output = property(lambda self: self.record.get("output", ""))
    verdict = property(lambda self: self.record.get("verdict", ""))
    passed = property(lambda self: self.record.get("verdict") == "pass")
    failures = property(lambda self: list(self.record.get("failures", [])))
    hints = property(lambda self: list(self.record.get("hints", [])))
    policy = property(lambda self: dict(self.record.get("policy", {})))

    def _errors(self, key):
        return (self.stats.get("errors") or {}).get(key)

    def _metric(self, key):
        return (self.stats.get("metrics") or {}).get(key)

    max_abs_error = property(lambda self: self._errors("max_abs_error"))
    max_rel_error = property(lambda self: self._errors("max_rel_error"))
    mean_abs_error = property(lambda self: self._errors("mean_abs_error"))
    mean_rel_error = property(lambda self: self._errors("mean_rel_error"))
    percentiles = property(lambda self: dict(self._errors("abs_error_percentiles") or {}))
    cosine = property(lambda self: self._metric("cosine"))
    snr_db = property(lambda self: self._metric("snr_db"))
    psnr_db = property(lambda self: self._metric("psnr_db"))
    rmse = property(lambda self: self._metric("rmse"))
    nmse = property(lambda self: self._metric("nmse"))
    mismatches = property(lambda self: self.stats.get("mismatches"))
    num_elements = property(lambda self: self.stats.get("num_elements"))
    atol_to_pass = property(lambda self: self.stats.get("atol_to_pass"))
    rtol_to_pass = property(lambda self: self.stats.get("rtol_to_pass"))
    worst_element = property(lambda self: self.stats.get("worst_element"))

    def __repr__(self) -> str:
        figures = ""
        if self.max_abs_error is not None:
            figures = " max|diff| %.3g" % self.max_abs_error
        return "<OutputResult sample %d %r: %s%s>" % (self.sample, self.output, self.verdict,
                                                      figures)


class Report:
    """A gate's outcome. ``data`` is report.json's document; ``verify_result`` and ``junit`` the
    other files ``--out`` writes; ``console`` the table the command prints."""

    def __init__(self, data: Dict[str, Any], verify_result: Optional[Dict[str, Any]] = None,
                 junit: str = "", console: str = ""):
        self.data = data
        self.verify_result = verify_result or {}
        self.junit = junit
        self.console = console

    @classmethod
    def load(cls, folder_or_file: Union[str, os.PathLike]) -> "Report":
        """A report written earlier: a results folder (--out) or its report.json."""
        path = os.fspath(folder_or_file)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        report_path = path if not os.path.isdir(path) else os.path.join(path, "report.json")
        with open(report_path, encoding="utf-8") as f:
            data = json.load(f)
        verify_result: Dict[str, Any] = {}
        junit = ""
        verify_path = os.path.join(folder, "verify_result.json")
        if os.path.exists(verify_path):
            with open(verify_path, encoding="utf-8") as f:
                verify_result = json.load(f)
        junit_path = os.path.join(folder, "junit.xml")
        if os.path.exists(junit_path):
            with open(junit_path, encoding="utf-8") as f:
                junit = f.read()
        return cls(data, verify_result, junit)

    verdict = property(lambda self: self.data.get("verdict", "error"))
    passed = property(lambda self: self.data.get("verdict") == "pass")
    exit_code = property(lambda self: int(self.data.get("exit_code", 4)))
    command = property(lambda self: self.data.get("command", ""))
    error = property(lambda self: self.data.get("error"))
    summary = property(lambda self: dict(self.data.get("summary") or {}))
    structure_failures = property(lambda self: list(self.data.get("structure_failures") or []))
    agreements = property(lambda self: list(self.data.get("agreements") or []))
    aggregates = property(lambda self: list(self.data.get("aggregates") or []))
    per_node = property(lambda self: self.data.get("per_node"))

    @property
    def results(self) -> List[OutputResult]:
        """Every output of every sample, in the order judged."""
        return [OutputResult(record) for record in self.data.get("results") or []]

    @property
    def outputs(self) -> Dict[str, List[OutputResult]]:
        """Each output's results, one per sample."""
        by_output: Dict[str, List[OutputResult]] = {}
        for result in self.results:
            by_output.setdefault(result.output, []).append(result)
        return by_output

    @property
    def samples(self) -> Dict[int, List[OutputResult]]:
        """Each sample's results, one per output."""
        by_sample: Dict[int, List[OutputResult]] = {}
        for result in self.results:
            by_sample.setdefault(result.sample, []).append(result)
        return by_sample

    def output(self, name: str, sample: int = 0) -> OutputResult:
        """One output of one sample; KeyError naming the outputs there are."""
        for result in self.results:
            if result.output == name and result.sample == sample:
                return result
        raise KeyError("no output %r in sample %d (outputs: %s)"
                       % (name, sample, ", ".join(sorted(self.outputs)) or "none"))

    @property
    def failed(self) -> List[OutputResult]:
        return [result for result in self.results if not result.passed]

    @property
    def first_divergence(self) -> Optional[Dict[str, Any]]:
        """--per-node: the first node (in run order) whose output left the tolerance."""
        per_node = self.per_node or {}
        return per_node.get("first_divergent")

    @property
    def culprit(self) -> Optional[Dict[str, Any]]:
        """--per-node: the node that added the most error (report.json's per_node.culprit)."""
        per_node = self.per_node or {}
        return per_node.get("culprit")

    def to_json(self, indent: Optional[int] = 2) -> str:
        """report.json's document."""
        return json.dumps(self.data, indent=indent)

    def write(self, folder: Union[str, os.PathLike]) -> str:
        """Writes report.json, verify_result.json and junit.xml into `folder` (created if needed),
        the files ``--out`` writes. Returns the folder."""
        from . import _convgate

        folder = os.fspath(folder)
        _convgate.write_results(folder, json.dumps(self.data), json.dumps(self.verify_result),
                                self.junit)
        return folder

    def html(self) -> str:
        """The self-contained HTML report (``--html``)."""
        from . import _convgate

        return _convgate.render_html(json.dumps(self.data))

    def markdown(self) -> str:
        """The Markdown summary (``--markdown``)."""
        from . import _convgate

        return _convgate.render_markdown(json.dumps(self.data))

    def _repr_html_(self) -> str:
        return self.html()

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        if self.console:
            return self.console.rstrip("\n")
        failed = self.failed
        return "<convgate.Report %s: %d results, %d failed>" % (self.verdict.upper(),
                                                               len(self.results), len(failed))
