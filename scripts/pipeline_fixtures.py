#!/usr/bin/env python3
"""Writes the pipeline test fixtures into OUT: tiny seeded PyTorch models, each as TorchScript (the
source nodes) and as ONNX exports (the targets), some of them deliberately wrong.

Three-stage pipeline (audio [1, 16] -> features -> embedding -> classifier -> logits [1, 4]):
  features.pt / features.onnx       feats = relu(Linear(16, 32)(audio))
  embedding.pt / embedding.onnx     emb = tanh(Linear(32, 8)(feats))
  embedding_nan.onnx                the same, but NaN wherever max(feats) > 50: finite on ordinary
                                    inputs, NaN at a step whose audio is large
  classifier.onnx                   logits = Linear(8, 4)(emb) (an ONNX source node: mixed formats)
Recurrent model (x [1, 4], h [1, 8] -> h_out [1, 8], y [1, 2]; h_out feeds h at the next step):
  rnn.pt / rnn.onnx                 h_out = tanh(Wx x + Wh (h - 100)) + 100, y = Linear(8, 2)(h_out - 100)
  rnn_fp16_state.onnx               the same with h cast to float16 and back on the way in: exact at
                                    step 0 (h = 0), off from step 1 on
  nan_inputs.npz                    20 steps of audio (sample_<i>/audio), step 5 scaled by 1000

TorchScript is saved by the torch the caller runs (Debian's python3-torch, the version the
project's libtorch is), so the torch backend loads it.
"""
import argparse
import os

import numpy as np
import torch
from torch import nn


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(16, 32)

    def forward(self, audio):
        return torch.relu(self.linear(audio))


class Embedding(nn.Module):
    def __init__(self, nan_above=None):
        super().__init__()
        self.linear = nn.Linear(32, 8)
        self.nan_above = nan_above

    def forward(self, feats):
        emb = torch.tanh(self.linear(feats))
        if self.nan_above is not None:
            # log of a negative number is NaN; times 0 it is 0 wherever the log is finite.
            emb = emb + 0.0 * torch.log(self.nan_above - feats.amax(dim=1, keepdim=True))
        return emb


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, emb):
        return self.linear(emb)


class Rnn(nn.Module):
    def __init__(self, fp16_state=False):
        super().__init__()
        self.wx = nn.Linear(4, 8)
        self.wh = nn.Linear(8, 8, bias=False)
        self.out = nn.Linear(8, 2)
        self.fp16_state = fp16_state

    def forward(self, x, h):
        if self.fp16_state:
            h = h.half().float()
        # The state is kept around an offset of 100 (as a position or a running clock would be):
        # float16 holds 100.x to 1/32, so its rounding is far above float32's tolerance.
        h_out = torch.tanh(self.wx(x) + self.wh(h - 100.0)) + 100.0
        return h_out, self.out(h_out - 100.0)


def seeded(module, seed, scale=1.0):
    torch.manual_seed(seed)
    for param in module.parameters():
        nn.init.normal_(param, std=scale / param.shape[-1] ** 0.5)
    return module.eval()


def export(module, args, names_in, names_out, out, stem, torchscript):
    with torch.no_grad():
        if torchscript:
            torch.jit.trace(module, args).save(os.path.join(out, stem + ".pt"))
        torch.onnx.export(module, args, os.path.join(out, stem + ".onnx"), input_names=names_in,
                          output_names=names_out, opset_version=13)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    out = parser.parse_args().out
    audio = torch.zeros(1, 16)
    feats = torch.zeros(1, 32)
    emb = torch.zeros(1, 8)
    export(seeded(Features(), 1), (audio,), ["audio"], ["feats"], out, "features", True)
    embedding = seeded(Embedding(), 2)
    export(embedding, (feats,), ["feats"], ["emb"], out, "embedding", True)
    broken = Embedding(nan_above=50.0)
    broken.load_state_dict(embedding.state_dict())
    export(broken.eval(), (feats,), ["feats"], ["emb"], out, "embedding_nan", False)
    export(seeded(Classifier(), 3), (emb,), ["emb"], ["logits"], out, "classifier", False)
    rnn = seeded(Rnn(), 4)
    args = (torch.zeros(1, 4), torch.zeros(1, 8))
    export(rnn, args, ["x", "h"], ["h_out", "y"], out, "rnn", True)
    fp16 = Rnn(fp16_state=True)
    fp16.load_state_dict(rnn.state_dict())
    export(fp16.eval(), args, ["x", "h"], ["h_out", "y"], out, "rnn_fp16_state", False)
    rng = np.random.default_rng(5)
    steps = {f"sample_{step}/audio": rng.random((1, 16), dtype=np.float32) for step in range(20)}
    steps["sample_5/audio"] *= 1000.0
    np.savez(os.path.join(out, "nan_inputs.npz"), **steps)


if __name__ == "__main__":
    main()
