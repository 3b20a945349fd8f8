#!/usr/bin/env python3
"""Writes fuzz/corpus/safetensors/ with the real safetensors library (run with the project's venv:
~/.cache/convgate-deps/venv/bin/python fuzz/make_safetensors_seeds.py fuzz/corpus/safetensors), so
the fuzzer starts from files exactly as save_file writes them. Run by hand, never by the build."""
import os
import sys

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file


def main(out):
    os.makedirs(out, exist_ok=True)
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([1, -2], dtype=np.int64)},
              os.path.join(out, "f32_i64.safetensors"), metadata={"format": "pt"})
    save_file({"h": np.array([1.5, -0.25, np.inf], dtype=np.float16), "flag": np.array([True, False])},
              os.path.join(out, "f16_bool.safetensors"))
    save_file({"bf": np.array([1.0, 2.5, -3.0], dtype=ml_dtypes.bfloat16),
               "u8": np.array([[0, 255]], dtype=np.uint8), "empty": np.zeros((0, 4), dtype=np.float64),
               "scalar": np.array(7, dtype=np.int32)},
              os.path.join(out, "bf16_mixed.safetensors"))
    for name in os.listdir(out):
        os.chmod(os.path.join(out, name), 0o644)


if __name__ == "__main__":
    main(sys.argv[1])
