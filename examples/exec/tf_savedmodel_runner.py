#!/usr/bin/env python3
"""A TensorFlow SavedModel on TensorFlow, run by convgate through the exec backend.

convgate has no TensorFlow backend; this runner is the source side of Path B for SavedModels
(`convgate verify SAVEDMODEL --to openvino`), TensorFlow itself computing what the OpenVINO IR is
compared against:

    convgate verify SAVEDMODEL_DIR --to openvino --load-inputs INPUTS.npz \
        --source-exec "$CONVGATE_VENV/bin/python examples/exec/tf_savedmodel_runner.py \
                       {model} --serve {inputs_dir} {outputs_dir}"

The exec protocol (exec_serve.py): argv[1] the SavedModel folder, then `--serve` and two folders
(TensorFlow imported and the model loaded once for every sample) or an .npz of one sample's inputs
and the .npz to write its outputs to. Inputs are named as the serving signature names its
arguments, outputs by their keys (ovc names the IR's inputs and outputs the same way). A sample
that fails is exit 3 (one sample) or an "error" answer, with the message. Needs the venv's tensorflow-cpu (scripts/setup.sh).
Environment: TF_SIGNATURE (default serving_default) picks another signature.
"""
import os
import sys

from exec_serve import RunnerError, main


def load(model):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    name = os.environ.get("TF_SIGNATURE", "serving_default")
    try:
        signatures = tf.saved_model.load(model).signatures
    except (OSError, ValueError, tf.errors.OpError) as e:
        raise RunnerError(f"{model}: TensorFlow cannot load this SavedModel: {e}")
    if name not in signatures:
        raise RunnerError(f"{model}: no signature '{name}' (has {sorted(signatures)})")
    return tf, signatures[name]


def run(state, arrays):
    tf, function = state
    feed = {key: tf.constant(value) for key, value in arrays.items()}
    wanted = sorted(function.structured_input_signature[1])
    if sorted(feed) != wanted:
        raise RunnerError(f"inputs {sorted(feed)}, the signature takes {wanted}")
    outputs = function(**feed)
    return {key: value.numpy() for key, value in outputs.items()}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], load, run,
                  "usage: tf_savedmodel_runner.py SAVEDMODEL INPUTS.npz OUTPUTS.npz\n"
                  "       tf_savedmodel_runner.py SAVEDMODEL --serve INPUTS_DIR OUTPUTS_DIR"))
