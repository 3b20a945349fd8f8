#!/usr/bin/python3
"""Recomputes convgate's tensor comparison statistics with numpy, the way numpy users write them.

Usage: numpy_stats.py CASES_JSON

CASES_JSON: {"cases": [{"name", "source_dtype", "target_dtype", "shape": [...], "atol", "rtol",
"source": FILE, "target": FILE}]}, FILE paths relative to the JSON file, raw little-endian element
bytes (bfloat16 as its uint16 bit pattern). Prints one JSON object keyed by case name on stdout;
NaN and infinities are written as the strings "nan", "inf", "-inf" so plain JSON parsers read them.

Run by compare_test (numpy_cross_check_test.cc) with Debian's /usr/bin/python3, which has numpy.
Both sides are widened to float64 first: convgate compares in double, and numpy.isclose on float16
arrays would otherwise compute in float16.
"""
import json
import os
import sys

import numpy as np

REL_ERROR_FLOOR = 1e-12  # kRelErrorFloor in tensor_compare.h
PERCENTILES = [50.0, 75.0, 90.0, 99.0, 99.5]  # kPercentiles


def load(path, dtype, shape):
    if dtype == "bfloat16":
        bits = np.fromfile(path, dtype="<u2").astype(np.uint32) << 16
        values = bits.view(np.float32)
    else:
        values = np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<"))
    return values.reshape(shape).astype(np.float64)


def num(value):
    value = float(value)
    if np.isnan(value):
        return "nan"
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def first(mask):
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else -1


def value_summary(x):
    finite = x[np.isfinite(x)]
    empty = finite.size == 0
    return {
        "min": 0.0 if empty else num(finite.min()),
        "max": 0.0 if empty else num(finite.max()),
        "mean": 0.0 if empty else num(finite.mean()),
        "finite": int(finite.size),
        "nan": int(np.isnan(x).sum()),
        "pos_inf": int(np.isposinf(x).sum()),
        "neg_inf": int(np.isneginf(x).sum()),
    }


def element(s, t, flat, atol, rtol):
    if flat < 0:
        return {"flat": -1, "index": []}
    sv, tv = s.flat[flat], t.flat[flat]
    abs_error = np.abs(tv - sv)
    return {
        "flat": flat,
        "index": [int(i) for i in np.unravel_index(flat, s.shape)],
        "source": num(sv),
        "target": num(tv),
        "abs_error": num(abs_error),
        "rel_error": num(abs_error / max(abs(sv), REL_ERROR_FLOOR)),
        "allowed": num(atol + rtol * np.abs(sv)),
    }


def non_finite_split(s, t):
    shared_nan = np.isnan(s) & np.isnan(t)
    shared_inf = np.isinf(s) & (s == t)
    intro_nan = np.isfinite(s) & np.isnan(t)
    intro_inf = np.isfinite(s) & np.isinf(t)
    inherited = ~np.isfinite(s) & ~shared_nan & ~shared_inf
    return {
        "introduced_nan": int(intro_nan.sum()),
        "introduced_inf": int(intro_inf.sum()),
        "inherited": int(inherited.sum()),
        "shared_nan": int(shared_nan.sum()),
        "shared_inf": int(shared_inf.sum()),
        "first_introduced": first(intro_nan | intro_inf),
        "first_introduced_nan": first(intro_nan),
        "first_introduced_inf": first(intro_inf),
        "first_inherited": first(inherited),
    }


def error_stats(s, t, both_finite, atol, rtol):
    diff = np.abs(t - s)
    err = diff[both_finite]
    stats = {"compared": int(err.size)}
    if err.size == 0:
        return stats
    rel = err / np.maximum(np.abs(s[both_finite]), REL_ERROR_FLOOR)
    stats.update({
        "max_abs_error": num(err.max()),
        "mean_abs_error": num(err.mean()),
        "max_rel_error": num(rel.max()),
        "mean_rel_error": num(rel.mean()),
        "percentiles": [num(p) for p in np.percentile(err, PERCENTILES)],
        "max_abs": element(s, t, int(np.argmax(np.where(both_finite, diff, -1.0))), atol, rtol),
    })
    return stats


def metrics(s, t, both_finite):
    """RMSE, NMSE, cosine, SNR, PSNR over the finite pairs, as tensor_compare.h defines them."""
    if not both_finite.any():
        return {"rmse": 0.0, "nmse": 0.0, "cosine": 0.0, "snr_db": 0.0, "psnr_db": 0.0, "peak": 0.0}
    src, tgt = s[both_finite], t[both_finite]
    err = tgt - src
    mse = np.mean(err ** 2)
    sq_err, sq_src, sq_tgt = np.sum(err ** 2), np.sum(src ** 2), np.sum(tgt ** 2)
    peak = np.max(np.abs(src))
    if sq_src == 0 and sq_tgt == 0:
        cosine = 1.0
    elif sq_src == 0 or sq_tgt == 0:
        cosine = 0.0
    else:
        cosine = np.dot(src, tgt) / (np.linalg.norm(src) * np.linalg.norm(tgt))
    return {
        "rmse": num(np.sqrt(mse)),
        "nmse": num(sq_err / sq_src if sq_src > 0 else (np.inf if sq_err > 0 else 0.0)),
        "cosine": num(cosine),
        "snr_db": num(np.inf if sq_err == 0 else 10 * np.log10(sq_src / sq_err)),
        "psnr_db": num(np.inf if sq_err == 0 else 10 * np.log10(peak ** 2 / mse)),
        "peak": num(peak),
    }


def worst_flat(s, t, both_finite, close, split, atol, rtol):
    """First introduced non-finite, else the largest |t-s|/allowed, else the first inherited."""
    if split["first_introduced"] >= 0:
        return split["first_introduced"]
    failing = both_finite & ~close
    if failing.any():
        diff = np.abs(t - s)
        allowed = atol + rtol * np.abs(s)
        ratio = np.where(allowed > 0, diff / np.where(allowed > 0, allowed, 1.0), np.inf)
        ratio = np.where(failing, ratio, -np.inf)
        candidates = failing & (ratio == ratio.max())  # ties go to the larger |t-s|
        return int(np.argmax(np.where(candidates, diff, -1.0)))
    return split["first_inherited"]


def compare(case, base):
    shape = case["shape"]
    atol, rtol = case["atol"], case["rtol"]
    s = load(os.path.join(base, case["source"]), case["source_dtype"], shape)
    t = load(os.path.join(base, case["target"]), case["target_dtype"], shape)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        close = np.isclose(t, s, rtol=rtol, atol=atol, equal_nan=True)  # source is the reference
        both_finite = np.isfinite(s) & np.isfinite(t)
        split = non_finite_split(s, t)
        mismatches = int((~close).sum())
        worst = worst_flat(s, t, both_finite, close, split, atol, rtol)
        return {
            "num_elements": int(s.size),
            "source_values": value_summary(s),
            "target_values": value_summary(t),
            "non_finite": split,
            "errors": error_stats(s, t, both_finite, atol, rtol),
            "metrics": metrics(s, t, both_finite),
            "mismatches": mismatches,
            "mismatch_fraction": mismatches / s.size if s.size else 0.0,
            "worst": element(s, t, worst, atol, rtol),
            "passed": mismatches == 0 and case["source_dtype"] == case["target_dtype"],
        }


def main():
    path = sys.argv[1]
    with open(path) as f:
        cases = json.load(f)["cases"]
    base = os.path.dirname(os.path.abspath(path))
    json.dump({case["name"]: compare(case, base) for case in cases}, sys.stdout, allow_nan=False)
    print()


if __name__ == "__main__":
    main()
