"""convgate: prove a converted ML model still computes what its source computed.

The gate from Python, on the C++ engine (no child process):

    import convgate, torch
    torch.onnx.export(model, (x,), "model.onnx", input_names=["x"], output_names=["y"])
    report = convgate.compare("model.onnx", "model_fp16.onnx", samples=4, per_node=True)
    assert report.passed, report

    # outputs you already hold, compared where they lie (numpy arrays, CPU torch tensors)
    report = convgate.compare_arrays(model(x).detach(), session_outputs["y"],
                                     policy=convgate.Policy(atol=1e-4, rtol=1e-3))

Every function returns a Report (``.passed``, ``.exit_code``, per-output and per-sample results,
``.first_divergence``, ``.culprit``, ``.to_json()``, ``.write(dir)``) or raises a convgate.Error
whose ``exit_code`` is the command line's (2 usage, 3 cannot run, 4 internal).
"""

from ._errors import CannotRunError, Error, InternalError, UsageError
from ._policy import Policy
from ._report import OutputResult, Report
from ._api import check, compare, compare_arrays, convert, run, verify, version

__all__ = [
    "CannotRunError",
    "Error",
    "InternalError",
    "OutputResult",
    "Policy",
    "Report",
    "UsageError",
    "check",
    "compare",
    "compare_arrays",
    "convert",
    "run",
    "verify",
    "version",
]
__version__ = version().split(" ")[0]
