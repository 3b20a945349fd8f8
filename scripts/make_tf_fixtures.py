#!/usr/bin/env python3
"""Builds the TensorFlow SavedModel fixture of Path B (`convgate convert SAVEDMODEL --to openvino`).

    make_tf_fixtures.py OUT_DIR

writes into OUT_DIR (scripts/make_tf_fixtures.sh calls it into a staging folder of the cache):
    tiny_cnn/          a SavedModel (saved_model.pb + variables/) of a tf.Module whose
                       serving_default signature takes "images" float32[N, 16, 16, 3] and returns
                       "logits" float32[N, 10]: Conv2D (bias, ReLU), DepthwiseConv2D, BatchNorm
                       folded by hand (scale/shift), global average pooling, Dense. Seeded weights.
    tiny_cnn_perturbed/
                       the same with the depthwise weights of one channel scaled by 1.5 (a broken
                       conversion's stand-in: a gate comparing it with tiny_cnn must fail).
    tiny_cnn_inputs.npz, tiny_cnn_outputs.npz
                       one sample (batch 2) and what TensorFlow computes on it, for
                       `convgate compare --load-outputs`-style checks without TensorFlow.
Prints one JSON line describing what it built (versions included).
"""
import json
import os
import sys

SEED = 0


def build(tf):
    tf.random.set_seed(SEED)
    init = tf.random.normal

    class TinyCnn(tf.Module):
        def __init__(self):
            super().__init__()
            self.conv = tf.Variable(init([3, 3, 3, 8], stddev=0.3), name="conv")
            self.conv_bias = tf.Variable(init([8], stddev=0.1), name="conv_bias")
            self.depthwise = tf.Variable(init([3, 3, 8, 1], stddev=0.3), name="depthwise")
            self.scale = tf.Variable(1.0 + init([8], stddev=0.1), name="bn_scale")
            self.shift = tf.Variable(init([8], stddev=0.1), name="bn_shift")
            self.dense = tf.Variable(init([8, 10], stddev=0.3), name="dense")
            self.dense_bias = tf.Variable(init([10], stddev=0.1), name="dense_bias")

        @tf.function(input_signature=[tf.TensorSpec([None, 16, 16, 3], tf.float32, name="images")])
        def __call__(self, images):
            x = tf.nn.relu(tf.nn.conv2d(images, self.conv, 1, "SAME") + self.conv_bias)
            x = tf.nn.depthwise_conv2d(x, self.depthwise, [1, 1, 1, 1], "SAME")
            x = tf.nn.relu6(x * self.scale + self.shift)
            x = tf.reduce_mean(x, axis=[1, 2])
            return {"logits": tf.matmul(x, self.dense) + self.dense_bias}

    return TinyCnn()


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    module = build(tf)
    path = os.path.join(out, "tiny_cnn")
    tf.saved_model.save(module, path, signatures={"serving_default": module.__call__})
    scale = np.ones([3, 3, 8, 1], dtype=np.float32)
    scale[:, :, 3, :] = 1.5
    module.depthwise.assign(module.depthwise * scale)
    tf.saved_model.save(module, os.path.join(out, "tiny_cnn_perturbed"),
                        signatures={"serving_default": module.__call__})
    # The outputs of the saved and reloaded model, as the exec runner computes them.
    loaded = tf.saved_model.load(path).signatures["serving_default"]
    images = np.random.default_rng(SEED).standard_normal((2, 16, 16, 3)).astype(np.float32)
    logits = loaded(images=tf.constant(images))["logits"].numpy()
    np.savez(os.path.join(out, "tiny_cnn_inputs.npz"), images=images)
    np.savez(os.path.join(out, "tiny_cnn_outputs.npz"), logits=logits)
    print(json.dumps({"model": path, "tensorflow": tf.__version__, "seed": SEED,
                      "inputs": {"images": [-1, 16, 16, 3]}, "outputs": {"logits": [-1, 10]}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
