"""The "openvino" backend's runner: one process per loaded model, serving every sample.

    <venv>/bin/python openvino_runner.py MODEL [--device CPU] [--precision f32] [--threads N]

convgate (src/backends/openvino/) starts it with the project venv's python (CONVGATE_VENV) and
speaks to it in JSON lines: requests on stdin, one response line each on stdout. Tensors travel in
.npz files that convgate writes and reads (io/npz.h), named in the requests.

  start-up   the runner reads MODEL (OpenVINO IR .xml with its .bin beside it, or .onnx) with
             Core.read_model, compiles it for the device and answers once:
               {"ok": true, "version": "...", "settings": "...", "inputs": [PORT...],
                "outputs": [PORT...]}
             PORT = {"name": N, "type": "float32" (numpy's name, or OpenVINO's when numpy has
             none), "shape": [3, -1, ...] (-1: dynamic) or null (dynamic rank)}.
  run        {"op": "run", "inputs": "in.npz", "outputs": "out.npz", "names": [N...]}
             feeds in.npz's arrays by input name, writes the named tensors (all outputs when
             names is empty) to out.npz and answers {"ok": true}. A name that is not an output is
             an intermediate tensor: the model is read again with Model.add_outputs(names) and
             compiled; the last such compiled model is kept for the next request.
  end        end of file on stdin.

Every failure is a response {"ok": false, "code": C, "message": M} with C one of convgate's
status codes (NotFound, DataLoss, InvalidArgument, Unimplemented, FailedPrecondition,
Unavailable); after a start-up failure the runner exits 3. The response stream is a duplicate of
the original stdout; stdout itself is pointed at stderr, so nothing OpenVINO or a library prints
can corrupt it. The runner exits when its parent dies (polled every second), since a long
inference would otherwise outlive a convgate killed by SIGKILL.
"""
import argparse
import json
import os
import sys
import threading
import time

EXIT_START_FAILED = 3


def respond(stream, **fields):
    stream.write(json.dumps(fields) + "\n")
    stream.flush()


class Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def watch_parent():
    parent = os.getppid()

    def loop():
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=loop, daemon=True).start()


def port_name(port, index, kind):
    names = port.get_names()
    if kind == "input":
        # A Parameter whose value is also a graph output (an ONNX Identity, Max of one input) holds
        # both tensor names; its friendly name is the model's input name (ONNX's, or the IR layer's).
        friendly = port.get_node().get_friendly_name()
        if friendly in names:
            return friendly
    try:
        return port.get_any_name()
    except RuntimeError:
        # An IR without tensor names: the producing node's name, as OpenVINO's tools show it.
        node = port.get_node()
        name = node.get_friendly_name()
        return name if name else "%s_%d" % (kind, index)


# OpenVINO's element type names -> convgate's (core/dtype.h). Types convgate cannot hold (f8, i4,
# nf4, ...) keep OpenVINO's name; convgate then refuses to feed or fetch them.
TYPE_NAMES = {
    "f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16", "i8": "int8",
    "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16",
    "u32": "uint32", "u64": "uint64", "boolean": "bool", "string": "string",
}


def type_name(element_type):
    name = element_type.get_type_name()
    return TYPE_NAMES.get(name, name)


def describe_port(port, index, kind):
    shape = port.get_partial_shape()
    dims = None
    if shape.rank.is_static:
        dims = [d.get_length() if d.is_static else -1 for d in shape]
    return {"name": port_name(port, index, kind), "type": type_name(port.get_element_type()),
            "shape": dims}


def clean(error):
    """OpenVINO's message without its source locations ("Exception from src/...:", "Check 'x'
    failed at src/...:" lines), which say where in OpenVINO, not what is wrong with the model."""
    lines = [line.strip() for line in str(error).strip().splitlines()]
    kept = [line for line in lines
            if line and not line.startswith("Exception from src/") and
            not (line.startswith("Check '") and " failed at src/" in line)]
    return " ".join(kept) if kept else " ".join(lines)


def classify_read_error(message):
    if "No conversion rule" in message or "OpConversionFailure" in message or \
            "is not supported" in message:
        return "Unimplemented"
    return "DataLoss"


class Runner:
    def __init__(self, ov, args):
        self.ov = ov
        self.args = args
        self.core = ov.Core()
        self.config = {"INFERENCE_PRECISION_HINT": args.precision}
        if args.threads > 0:
            self.config["INFERENCE_NUM_THREADS"] = args.threads
        self.model = self.read()
        self.compiled = self.compile(self.model)
        self.request = self.compiled.create_infer_request()
        self.extra_key = None  # the names of the intermediate-value model kept, a frozenset
        self.extra = None      # (compiled, infer request, {name: output index})

    def read(self):
        try:
            return self.core.read_model(self.args.model)
        except Exception as e:  # OpenVINO raises RuntimeError and its own subclasses
            message = clean(e)
            raise Failure(classify_read_error(message),
                          "OpenVINO cannot read the model: " + message)

    def compile(self, model):
        try:
            return self.core.compile_model(model, self.args.device, self.config)
        except Exception as e:
            message = clean(e)
            code = "Unimplemented" if "not supported" in message else "InvalidArgument"
            raise Failure(code, "OpenVINO cannot compile the model for %s: %s"
                          % (self.args.device, message))

    def hello(self):
        inputs = [describe_port(p, i, "input") for i, p in enumerate(self.model.inputs)]
        outputs = [describe_port(p, i, "output")
                   for i, p in enumerate(self.model.outputs)]
        precision = self.compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        settings = "%s, inference precision %s" % (self.args.device, precision)
        return {"ok": True, "version": self.ov.get_version(), "settings": settings,
                "inputs": inputs, "outputs": outputs}

    def output_index(self, compiled):
        index = {}
        for i, port in enumerate(compiled.outputs):
            names = port.get_names() or {port_name(port, i, "output")}
            for name in names:
                index.setdefault(name, i)
        return index

    def for_names(self, names):
        """(infer request, {name: output index}) serving `names`."""
        plain = self.output_index(self.compiled)
        extra = frozenset(n for n in names if n not in plain)
        if not extra:
            return self.request, plain
        if extra != self.extra_key:
            self.extra = self.extra_key = None  # one intermediate model at a time: weights twice
            model = self.read()
            try:
                model.add_outputs(sorted(extra))
            except Exception as e:
                missing = [n for n in sorted(extra) if not has_tensor(model, n)]
                raise Failure("NotFound", "no tensor named %s in the model (%s)"
                              % (", ".join("'%s'" % n for n in missing) or "?", clean(e)))
            compiled = self.compile(model)
            self.extra = (compiled.create_infer_request(), self.output_index(compiled))
            self.extra_key = extra
        return self.extra

    def run(self, request):
        import numpy as np
        names = request.get("names") or []
        if not names:
            names = [port_name(p, i, "output") for i, p in enumerate(self.model.outputs)]
        infer, index = self.for_names(names)
        missing = [n for n in names if n not in index]
        if missing:
            raise Failure("NotFound", "no output named %s" % ", ".join("'%s'" % n for n in missing))
        feed = {}
        with np.load(request["inputs"], allow_pickle=False) as arrays:
            # The read model's names: compiling may drop names from a Parameter (the compiled
            # model's ports keep only some), and every compiled model keeps the inputs' order.
            for i, port in enumerate(self.model.inputs):
                name = port_name(port, i, "input")
                if name not in arrays.files:
                    found = [n for n in sorted(port.get_names()) if n in arrays.files]
                    if not found:
                        raise Failure("FailedPrecondition", "no value for input '%s' (given: %s)"
                                      % (name, ", ".join(arrays.files) or "nothing"))
                    name = found[0]
                feed[i] = to_tensor(self.ov, arrays[name], port.get_element_type())
        try:
            infer.infer(feed)
        except Exception as e:
            raise Failure("Unavailable", "OpenVINO failed running the model: " + clean(e))
        results = {}
        for name in names:
            tensor = infer.get_output_tensor(index[name])
            results[name] = from_tensor(tensor)
        np.savez(request["outputs"], **results)
        return {"ok": True}


def to_tensor(ov, array, element_type):
    """What infer() takes for `array`. convgate writes bfloat16 as 2-byte void ('V2', the raw
    bits); OpenVINO's Python API shows bf16 data as a float16 array of the same bits."""
    import numpy as np
    if array.dtype.kind == "V" and array.dtype.itemsize == 2 and \
            element_type.get_type_name() == "bf16":
        tensor = ov.Tensor(ov.Type.bf16, list(array.shape))
        tensor.data[...] = array.view(np.float16)  # a bit copy: same dtype on both sides
        return tensor
    return array


def from_tensor(tensor):
    """A numpy array convgate reads back: strings through str_data (.data has no numpy view of
    them), bf16 as its raw bits in 2-byte void, as convgate writes bfloat16."""
    import numpy as np
    type_name = tensor.get_element_type().get_type_name()
    if type_name == "string":
        return np.array(tensor.str_data)
    if type_name == "bf16":
        return np.array(tensor.data, copy=True).view(np.uint16).view("V2")
    return np.array(tensor.data, copy=True)


def has_tensor(model, name):
    for op in model.get_ops():
        for output in op.outputs():
            if name in output.get_names():
                return True
    return False


def serve(runner, requests, responses):
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") != "run":
                raise Failure("InvalidArgument", "unknown request %r" % request.get("op"))
            respond(responses, **runner.run(request))
        except Failure as f:
            respond(responses, ok=False, code=f.code, message=f.message)
        except MemoryError:
            respond(responses, ok=False, code="Unavailable", message="out of memory")
        except Exception as e:  # a bug here, or numpy refusing a file: say so, keep serving
            respond(responses, ok=False, code="Unavailable",
                    message="%s: %s" % (type(e).__name__, str(e).strip()))


def run_runner(package, make_runner):
    """A runner's life after its arguments are parsed (shared with runtime/pt2_runner.py): the
    response stream (a duplicate of stdout, which is pointed at stderr so nothing a library prints
    can corrupt it), the parent watch, importing numpy and `package` (a missing one is a clear
    start-up failure), make_runner(the module) -> an object with hello() and run(request), its
    hello line, then serving until end of input. Returns the exit code."""
    import importlib
    responses = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    watch_parent()
    try:
        import numpy  # noqa: F401 (imported here so that its absence is a clear message)
        module = importlib.import_module(package)
    except ImportError as e:
        respond(responses, ok=False, code="FailedPrecondition",
                message="%s cannot import %s (%s): run ./scripts/setup.sh to install the pinned "
                        "venv, or point CONVGATE_VENV at one that has it"
                        % (sys.executable, e.name or package, e))
        return EXIT_START_FAILED
    try:
        runner = make_runner(module)
        hello = runner.hello()
    except Failure as f:
        respond(responses, ok=False, code=f.code, message=f.message)
        return EXIT_START_FAILED
    respond(responses, **hello)
    serve(runner, sys.stdin, responses)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--device", default="CPU")
    parser.add_argument("--precision", default="f32")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    return run_runner("openvino", lambda ov: Runner(ov, args))


if __name__ == "__main__":
    sys.exit(main())
