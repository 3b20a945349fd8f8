#!/usr/bin/python3
"""tinycnn in plain numpy, run by convgate through the exec backend.

    convgate compare build/examples/tinycnn.onnx build/examples/tinycnn_weights.npz \
        --target-exec '/usr/bin/python3 examples/exec/numpy_runner.py {model} --serve {inputs_dir} {outputs_dir}'

The exec protocol (exec_serve.py): argv[1] is the model (here tinycnn's weights, written by
tools/make_models.cc as tinycnn_weights.npz); then either one sample (an .npz of its inputs and
the .npz to write its outputs to: {inputs} {outputs}, a process per sample) or `--serve` and two
folders, one process serving every sample. Inputs: "image", float32 [batch, 3, 16, 16] (any name
is accepted when there is only one); outputs named as the model names them ("logits", "probs").
Debian's python3-numpy only.

The network, as tools/make_models.cc builds it in ONNX: Conv 3x3 (pad 1) -> BatchNormalization
-> Relu -> GlobalAveragePool -> Flatten -> Gemm (transB) -> "logits" -> Softmax -> "probs".
"""
import sys

import numpy as np

from exec_serve import RunnerError, main


def conv3x3_pad1(image, weight, bias):
    """NCHW convolution, 3x3 kernel, stride 1, zero padding 1, as ONNX Conv computes it."""
    batch, _, height, width = image.shape
    padded = np.pad(image, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((batch, weight.shape[0], height, width), dtype=np.float32)
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy:dy + height, dx:dx + width]
            out += np.einsum("nchw,oc->nohw", window, weight[:, :, dy, dx])
    return out + bias[None, :, None, None]


def tinycnn(weights, image):
    x = conv3x3_pad1(image, weights["conv.weight"], weights["conv.bias"])
    scale = weights["bn.scale"] / np.sqrt(weights["bn.var"] + weights["bn.epsilon"])
    x = (x - weights["bn.mean"][None, :, None, None]) * scale[None, :, None, None]
    x = x + weights["bn.bias"][None, :, None, None]
    x = np.maximum(x, 0)
    features = x.mean(axis=(2, 3))
    logits = features @ weights["fc.weight"].T + weights["fc.bias"]
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = shifted / shifted.sum(axis=1, keepdims=True)
    return {"logits": logits.astype(np.float32), "probs": probs.astype(np.float32)}


def load(weights_path):
    return dict(np.load(weights_path))


def run(weights, inputs):
    if "image" in inputs:
        image = inputs["image"]
    elif len(inputs) == 1:
        image = next(iter(inputs.values()))
    else:
        raise RunnerError(f"numpy_runner: expected one input 'image', got {sorted(inputs)}")
    if image.dtype != np.float32 or image.ndim != 4 or image.shape[1] != 3:
        raise RunnerError(f"numpy_runner: 'image' must be float32 [N, 3, H, W], got {image.dtype} "
                          f"{list(image.shape)}")
    return tinycnn(weights, image)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], load, run,
                  "usage: numpy_runner.py WEIGHTS.npz INPUTS.npz OUTPUTS.npz\n"
                  "       numpy_runner.py WEIGHTS.npz --serve INPUTS_DIR OUTPUTS_DIR"))
