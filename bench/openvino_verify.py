"""The baseline of bench/openvino_verify.sh: what a Python script doing the verify-conversion
document's Path B for an ONNX model does, in one process: convert the ONNX model to an IR and save
it (ovc's read_model + save_model), read and compile the IR, run one sample through it and through
ONNX Runtime, and compare the outputs with numpy (max |diff|).

    <venv>/bin/python bench/openvino_verify.py MODEL.onnx OUT_DIR SHAPE (e.g. 1x3x224x224)
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import openvino as ov


def main():
    model, out, shape = sys.argv[1], sys.argv[2], [int(d) for d in sys.argv[3].split("x")]
    core = ov.Core()
    xml = os.path.join(out, "model.xml")
    ov.save_model(core.read_model(model), xml, compress_to_fp16=False)
    compiled = core.compile_model(core.read_model(xml), "CPU",
                                  {"INFERENCE_PRECISION_HINT": "f32"})
    sample = np.random.default_rng(1).random(shape, dtype=np.float32)
    target = list(compiled(sample).values())
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    source = session.run(None, {session.get_inputs()[0].name: sample})
    worst = max(float(np.max(np.abs(s - t))) for s, t in zip(source, target))
    print("max |diff| %.3g over %d output(s)" % (worst, len(source)))


if __name__ == "__main__":
    main()
