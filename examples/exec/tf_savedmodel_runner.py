#!/usr/bin/env python3
"""A TensorFlow SavedModel on TensorFlow, run by convgate through the exec backend.

convgate has no TensorFlow backend; this runner is the source side of Path B for SavedModels
(`convgate verify SAVEDMODEL --to openvino`), TensorFlow itself computing what the OpenVINO IR is
compared against:

    convgate verify SAVEDMODEL_DIR --to openvino --load-inputs INPUTS.npz \
        --source-exec "$CONVGATE_VENV/bin/python examples/exec/tf_savedmodel_runner.py \
                       {model} {inputs} {outputs}"

The exec protocol: argv[1] the SavedModel folder, argv[2] an .npz of one sample's inputs named as
the serving signature names its arguments, argv[3] the .npz to write the signature's outputs to,
named by their keys (ovc names the IR's inputs and outputs the same way). Exit 0 on success, 3
with a message on stderr on failure. Needs the venv's tensorflow-cpu (scripts/setup.sh).
Environment: TF_SIGNATURE (default serving_default) picks another signature.
"""
import os
import sys

EXIT_FAILURE = 3


def main(argv):
    if len(argv) != 4:
        print("usage: tf_savedmodel_runner.py SAVEDMODEL INPUTS.npz OUTPUTS.npz", file=sys.stderr)
        return 2
    model, inputs_path, outputs_path = argv[1:]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    name = os.environ.get("TF_SIGNATURE", "serving_default")
    try:
        signatures = tf.saved_model.load(model).signatures
    except (OSError, ValueError, tf.errors.OpError) as e:
        print(f"{model}: TensorFlow cannot load this SavedModel: {e}", file=sys.stderr)
        return EXIT_FAILURE
    if name not in signatures:
        print(f"{model}: no signature '{name}' (has {sorted(signatures)})", file=sys.stderr)
        return EXIT_FAILURE
    function = signatures[name]
    with np.load(inputs_path) as npz:
        feed = {key: tf.constant(npz[key]) for key in npz.files}
    wanted = sorted(function.structured_input_signature[1])
    if sorted(feed) != wanted:
        print(f"{inputs_path}: inputs {sorted(feed)}, the signature takes {wanted}",
              file=sys.stderr)
        return EXIT_FAILURE
    outputs = function(**feed)
    np.savez(outputs_path, **{key: value.numpy() for key, value in outputs.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
