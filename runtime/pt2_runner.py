"""The "torch-export" backend's runner: one process per loaded torch.export program (.pt2),
serving every sample on the project venv's PyTorch.

    <venv>/bin/python pt2_runner.py PROGRAM.pt2 [--threads N]

The protocol is the openvino runner's (runtime/openvino_runner.py): JSON lines,
requests on stdin, one response line each on stdout, tensors in .npz files.

  start-up   torch.export.load(PROGRAM), then once:
               {"ok": true, "version": "torch 2.13.0+cpu", "settings": "...",
                "inputs": [PORT...], "outputs": [PORT...], "positional_outputs": true}
             PORT = {"name": N, "type": "float32", "shape": [1, "s0", ...]} from the program's
             placeholders: a dim torch.export made symbolic keeps its symbol's name. Inputs are
             the program's user inputs (forward()'s argument names); outputs are output_0,
             output_1, ... in the program's order (an ExportedProgram names its outputs after
             graph nodes, which no converter keeps), matched by position.
  run        {"op": "run", "inputs": "in.npz", "outputs": "out.npz", "names": [N...]}
  end        end of file on stdin.

Failures answer {"ok": false, "code": C, "message": M}; after a start-up failure the runner exits
3. The runner exits when its parent dies.
"""
import logging
import os
import sys
import traceback

# The openvino backend's runner (beside this file) speaks the same protocol: its failures,
# responses, serving loop and start-up are this runner's too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from openvino_runner import Failure, run_runner  # noqa: E402


class LoggedLines(logging.Handler):
    """The non-empty lines of the warnings torch logs, exceptions' last lines included."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + "".join(traceback.format_exception_only(*record.exc_info[:2]))
        self.lines += [line.strip() for line in text.splitlines() if line.strip()]


def describe_error(error):
    """One line for an exception and what caused it: torch.export.load wraps the reader's own
    message ("file in archive is not in a subdirectory") in a generic one."""
    parts = []
    while error is not None and len(parts) < 3:
        lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
        parts.append("%s: %s" % (type(error).__name__, lines[-1] if lines else ""))
        error = error.__cause__ or error.__context__
    return " (caused by ".join(parts) + ")" * (len(parts) - 1)


def dtype_name(dtype):
    import torch
    names = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
             torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16",
             torch.int32: "int32", torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool"}
    return names.get(dtype, str(dtype).replace("torch.", ""))


def port(name, value):
    """A port from a placeholder's example value (a FakeTensor): symbolic dims by name."""
    dims = []
    for dim in value.shape:
        # A SymInt torch.export left symbolic ("s0"); int() of one would give its example value.
        dims.append(dim if isinstance(dim, int) else str(dim))
    return {"name": name, "type": dtype_name(value.dtype), "shape": dims}


class Runner:
    def __init__(self, torch, path):
        self.torch = torch
        logged = LoggedLines()  # torch.export logs to its own handler and does not propagate
        logging.getLogger("torch.export").addHandler(logged)
        try:
            self.program = torch.export.load(path)
        except Exception as e:  # torch raises many kinds for a file that is no program
            # torch logs the reader's own error and raises a generic one ("check the warnings
            # above"): the logged line is the one that says what is wrong.
            detail = " (%s)" % logged.lines[-1] if logged.lines else ""
            raise Failure("DataLoss", "torch.export.load cannot read %s: %s%s"
                          % (path, describe_error(e), detail))
        finally:
            logging.getLogger("torch.export").removeHandler(logged)
        self.module = self.program.module()
        signature = self.program.graph_signature
        placeholders = {node.name: node for node in self.program.graph.nodes
                        if node.op == "placeholder"}
        self.input_names = list(signature.user_inputs)
        self.inputs = []
        for name in self.input_names:
            value = placeholders[name].meta.get("val")
            if value is None or not hasattr(value, "shape"):
                raise Failure("Unimplemented", "input '%s' of %s is not a tensor" % (name, path))
            self.inputs.append(port(name, value))
        outputs = [node for node in self.program.graph.nodes if node.op == "output"][0].args[0]
        self.outputs = []
        for index, node in enumerate(outputs):
            value = node.meta.get("val") if hasattr(node, "meta") else None
            if value is None or not hasattr(value, "shape"):
                raise Failure("Unimplemented", "output %d of %s is not a tensor" % (index, path))
            self.outputs.append(port("output_%d" % index, value))

    def hello(self):
        threads = self.torch.get_num_threads()
        return {"ok": True, "version": "torch " + self.torch.__version__,
                "settings": "CPU, %d thread(s)" % threads, "inputs": self.inputs,
                "outputs": self.outputs, "positional_outputs": True}

    def run(self, request):
        import numpy as np
        torch = self.torch
        names = request.get("names") or [p["name"] for p in self.outputs]
        known = [p["name"] for p in self.outputs]
        missing = [n for n in names if n not in known]
        if missing:
            raise Failure("NotFound", "no output named %s (a torch.export program has no "
                          "intermediate tensors to fetch)" % ", ".join("'%s'" % n for n in missing))
        args = []
        with np.load(request["inputs"], allow_pickle=False) as arrays:
            for name in self.input_names:
                if name not in arrays.files:
                    raise Failure("FailedPrecondition", "no value for input '%s' (given: %s)"
                                  % (name, ", ".join(arrays.files) or "nothing"))
                args.append(torch.from_numpy(np.array(arrays[name])))
        try:
            with torch.no_grad():
                result = self.module(*args)
        except Exception as e:
            raise Failure("Unavailable", "PyTorch failed running the program: %s: %s"
                          % (type(e).__name__, str(e).strip()))
        flat = list(result) if isinstance(result, (tuple, list)) else [result]
        values = {p["name"]: flat[i].detach().numpy() for i, p in enumerate(self.outputs)}
        np.savez(request["outputs"], **{name: values[name] for name in names})
        return {"ok": True}


def main():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("program")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()

    def make_runner(torch):
        if args.threads > 0:
            torch.set_num_threads(args.threads)
        return Runner(torch, args.program)

    return run_runner("torch", make_runner)


if __name__ == "__main__":
    sys.exit(main())
