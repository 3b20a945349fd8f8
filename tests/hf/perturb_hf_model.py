#!/usr/bin/env python3
"""Writes a perturbed copy of a Hugging Face model folder, for tests that a gate fails a wrong
conversion: every floating-point weight w becomes w * (1 + 0.3 * n), n ~ N(0, 1) seeded, and every
other file is copied as it is.

    perturb_hf_model.py SOURCE_FOLDER OUT_FOLDER

Run with the project's venv (safetensors, numpy). Exit codes: 0 written, 2 usage, 3 failure.
"""
import os
import shutil
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    source, out = argv
    import numpy as np
    from safetensors.numpy import load_file, save_file
    weights = os.path.join(source, "model.safetensors")
    if not os.path.isfile(weights):
        print("perturb_hf_model.py: %s: no model.safetensors" % source, file=sys.stderr)
        return 3
    shutil.copytree(source, out, dirs_exist_ok=True)
    rng = np.random.default_rng(7)
    tensors = load_file(weights)
    for name, value in tensors.items():
        if np.issubdtype(value.dtype, np.floating):
            noise = rng.standard_normal(value.shape).astype(value.dtype)
            # asarray: a 0-d weight (CLIP's logit_scale) would come back as a numpy scalar,
            # which safetensors cannot save.
            tensors[name] = np.asarray(value * (1 + 0.3 * noise), dtype=value.dtype)
    save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
