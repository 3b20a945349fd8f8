"""Policy: the tolerance policy, as the command line's tolerance flags set it."""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Union

Number = Union[int, float]

# keyword -> the flag `convgate compare` takes (docs/reference.md, "Tolerances")
_KNOBS = {
    "atol": "--atol",
    "rtol": "--rtol",
    "check_error_stat": "--check-error-stat",
    "mismatch_ppm": "--mismatch-ppm",
    "min_cosine": "--min-cosine",
    "min_snr_db": "--min-snr-db",
}


class Policy:
    """What counts as "still computes the same", mirroring compare's flags.

    Policy(atol=1e-4, rtol=1e-3)                      --atol 1e-4 --rtol 1e-3
    Policy(check_error_stat="p99", mismatch_ppm=100)  --check-error-stat p99 --mismatch-ppm 100
    Policy(min_cosine=0.999, min_snr_db=40)           --min-cosine 0.999 --min-snr-db 40
    Policy(per_output={"logits": {"atol": 1e-3}})     --atol logits:1e-3
    Policy.from_yaml("policy.yaml", rtol=1e-2)        --policy policy.yaml --rtol 1e-2

    Knobs left unset keep the per-dtype defaults (float32: atol 1e-5, rtol 1e-3; float16 and
    bfloat16 their own). Values are checked by the engine when the policy is used: a bad one raises
    UsageError naming the flag.
    """

    def __init__(
        self,
        *,
        atol: Optional[Number] = None,
        rtol: Optional[Number] = None,
        check_error_stat: Optional[str] = None,
        mismatch_ppm: Optional[Number] = None,
        min_cosine: Optional[Number] = None,
        min_snr_db: Optional[Number] = None,
        per_output: Optional[Mapping[str, Mapping[str, Union[Number, str]]]] = None,
        file: Optional[Union[str, os.PathLike]] = None,
    ):
        self.knobs: Dict[str, Union[Number, str]] = {}
        for name, value in (
            ("atol", atol),
            ("rtol", rtol),
            ("check_error_stat", check_error_stat),
            ("mismatch_ppm", mismatch_ppm),
            ("min_cosine", min_cosine),
            ("min_snr_db", min_snr_db),
        ):
            if value is not None:
                self.knobs[name] = value
        self.per_output: Dict[str, Dict[str, Union[Number, str]]] = {}
        for output, knobs in (per_output or {}).items():
            unknown = sorted(set(knobs) - set(_KNOBS))
            if unknown:
                from ._errors import UsageError

                raise UsageError(
                    "Policy per_output['%s']: unknown knob(s) %s (known: %s)"
                    % (output, ", ".join(unknown), ", ".join(_KNOBS)), 2)
            self.per_output[output] = dict(knobs)
        self.file = os.fspath(file) if file is not None else None

    @classmethod
    def from_yaml(cls, path: Union[str, os.PathLike], **overrides) -> "Policy":
        """A policy file (the format of ``--policy``); keyword arguments override it."""
        return cls(file=path, **overrides)

    def flags(self) -> List[str]:
        """The command-line flags this policy stands for."""
        args: List[str] = []
        if self.file is not None:
            args += ["--policy", self.file]
        for name, value in self.knobs.items():
            args += [_KNOBS[name], _text(value)]
        for output, knobs in self.per_output.items():
            for name, value in knobs.items():
                args += [_KNOBS[name], "%s:%s" % (output, _text(value))]
        return args

    def __repr__(self) -> str:
        return "Policy(%s)" % " ".join(self.flags())


def _text(value) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def policy_flags(policy) -> List[str]:
    """Flags for a Policy, a dict of Policy keywords, a YAML path, or None."""
    if policy is None:
        return []
    if isinstance(policy, Policy):
        return policy.flags()
    if isinstance(policy, Mapping):
        return Policy(**policy).flags()
    if isinstance(policy, (str, os.PathLike)):
        return Policy.from_yaml(policy).flags()
    from ._errors import UsageError

    raise UsageError("policy must be a convgate.Policy, a dict of its keywords or a YAML path, "
                     "not %s" % type(policy).__name__, 2)
