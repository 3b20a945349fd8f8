"""convgate's exceptions: one per exit-code category of the command line."""

from __future__ import annotations

from typing import Optional


class Error(Exception):
    """A gate that could not give a verdict. ``exit_code`` is what ``convgate`` would exit with:
    2 (the request is wrong), 3 (a model or file could not be loaded, converted, run or written),
    4 (a bug in convgate). ``report`` is the Report when the command wrote one (a load error still
    records both sides), else None."""

    category = "error"

    def __init__(self, message: str, exit_code: int, report: Optional["object"] = None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.report = report


class UsageError(Error, ValueError):
    """Exit 2: a bad argument, policy or array, found before anything ran."""

    category = "usage"


class CannotRunError(Error, RuntimeError):
    """Exit 3: a model, input or file could not be loaded, converted, run or written."""

    category = "cannot_run"


class InternalError(Error, RuntimeError):
    """Exit 4 (or an unexpected exit): a bug in convgate."""

    category = "internal"


def error_for(message: str, exit_code: int, report=None) -> Error:
    """The exception for a command line's exit code (the C++ module raises through this too)."""
    kind = {2: UsageError, 3: CannotRunError}.get(exit_code, InternalError)
    return kind(message, exit_code, report)
