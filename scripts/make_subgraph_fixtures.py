#!/usr/bin/python3
"""Builds the If/Loop/Scan test models of per-node subgraph validation once and reuses them:

  if_conv.onnx      x float[1,3,8,8], mode int64 scalar -> y. If(mode == 1): then_branch is a Conv
                    chain (then_conv1, then_relu, then_conv2; W2 is an initializer of the branch),
                    else_branch a MatMul chain ending in a 1x1 Conv.
  loop.onnx         x float[1,8] -> h_final [1,8], h_all [4,1,8]. A Loop with trip count 4 (a
                    scripted `for i in range(4)`): h = tanh(h @ W + x), every h stacked.
  scan.onnx         seq float[5,8], h0 float[8] -> h_last [8], ys [5,8]. A Scan (an RNN cell):
                    h = tanh(x_t @ Wx + h @ Wh).
  nested.onnx       x float[1,8], mode int64 scalar -> y. If(mode == 1) whose then_branch holds a
                    Loop of 3 iterations (MatMul, Tanh).
  unexpandable.onnx x float[1,8] -> a, b. Loop_big runs 100 iterations (past the unroll limit);
                    Loop_while stops on a condition its body computes and has no scan output.

Built with onnx.helper (Debian's python3-onnx; seeded weights), opset 17, into
  ${CONVGATE_FIXTURE_CACHE:-$HOME/.cache/convgate-fixtures}/subgraphs-<key>/
where <key> hashes this script and the onnx version, so a change to either builds again. The folder
appears atomically (built in a temporary folder, then renamed). Prints it on the last line of
stdout. Exit codes: 0 ready, 1 a model failed onnx.checker.
"""
import hashlib
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
RNG = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array((RNG.standard_normal(shape) * 0.3).astype(np.float32), name)


def const_node(name, value, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.array(value, dtype=dtype), name))


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def if_conv():
    then_branch = helper.make_graph(
        [helper.make_node("Conv", ["x", "W1"], ["then_c1"], name="then_conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["then_c1"], ["then_r1"], name="then_relu"),
         helper.make_node("Conv", ["then_r1", "W2"], ["then_out"], name="then_conv2",
                          pads=[1, 1, 1, 1])],
        "then_branch", [], [tensor("then_out", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[weight("W2", 4, 4, 3, 3)])
    else_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "M1"], ["else_m1"], name="else_matmul1"),
         helper.make_node("Relu", ["else_m1"], ["else_r1"], name="else_relu"),
         helper.make_node("MatMul", ["else_r1", "M2"], ["else_m2"], name="else_matmul2"),
         helper.make_node("Conv", ["else_m2", "W3"], ["else_out"], name="else_conv")],
        "else_branch", [], [tensor("else_out", TensorProto.FLOAT, [1, 4, 8, 8])])
    nodes = [const_node("one", 1),
             helper.make_node("Equal", ["mode", "one"], ["is_one"], name="is_mode_one"),
             helper.make_node("If", ["is_one"], ["branch_out"], name="If_0",
                              then_branch=then_branch, else_branch=else_branch),
             helper.make_node("Relu", ["branch_out"], ["y"], name="out_relu")]
    graph = helper.make_graph(
        nodes, "if_conv",
        [tensor("x", TensorProto.FLOAT, [1, 3, 8, 8]), tensor("mode", TensorProto.INT64, [])],
        [tensor("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[weight("W1", 4, 3, 3, 3), weight("M1", 8, 8), weight("M2", 8, 8),
                     weight("W3", 4, 3, 1, 1)])
    return model(graph)


def loop_body(prefix, weight_name, condition_nodes=None, scan=True):
    """h = tanh(h @ W + x); the condition passes through unless `condition_nodes` computes it."""
    nodes = [helper.make_node("MatMul", ["h", weight_name], [prefix + "_mm"],
                              name=prefix + "_matmul"),
             helper.make_node("Add", [prefix + "_mm", "x"], [prefix + "_add"],
                              name=prefix + "_add"),
             helper.make_node("Tanh", [prefix + "_add"], [prefix + "_h"], name=prefix + "_tanh")]
    nodes += condition_nodes or [helper.make_node("Identity", ["cond"], [prefix + "_cond"],
                                                  name=prefix + "_cond")]
    outputs = [tensor(prefix + "_cond", TensorProto.BOOL, []),
               tensor(prefix + "_h", TensorProto.FLOAT, [1, 8])]
    if scan:
        nodes.append(helper.make_node("Identity", [prefix + "_h"], [prefix + "_scan"],
                                      name=prefix + "_scan"))
        outputs.append(tensor(prefix + "_scan", TensorProto.FLOAT, [1, 8]))
    return helper.make_graph(
        nodes, prefix + "_body",
        [tensor("i", TensorProto.INT64, []), tensor("cond", TensorProto.BOOL, []),
         tensor("h", TensorProto.FLOAT, [1, 8])], outputs)


def loop():
    nodes = [const_node("trip", 4), const_node("keep_going", True, np.bool_),
             helper.make_node("Loop", ["trip", "keep_going", "x"], ["h_final", "h_all"],
                              name="Loop_0", body=loop_body("body", "W")),
             ]
    graph = helper.make_graph(
        nodes, "loop", [tensor("x", TensorProto.FLOAT, [1, 8])],
        [tensor("h_final", TensorProto.FLOAT, [1, 8]),
         tensor("h_all", TensorProto.FLOAT, [4, 1, 8])],
        initializer=[weight("W", 8, 8)])
    return model(graph)


def scan():
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["scan_xw"], name="scan_matmul_x"),
         helper.make_node("MatMul", ["h", "Wh"], ["scan_hw"], name="scan_matmul_h"),
         helper.make_node("Add", ["scan_xw", "scan_hw"], ["scan_sum"], name="scan_add"),
         helper.make_node("Tanh", ["scan_sum"], ["scan_h"], name="scan_tanh"),
         helper.make_node("Identity", ["scan_h"], ["scan_y"], name="scan_y")],
        "scan_body", [tensor("h", TensorProto.FLOAT, [8]), tensor("x_t", TensorProto.FLOAT, [8])],
        [tensor("scan_h", TensorProto.FLOAT, [8]), tensor("scan_y", TensorProto.FLOAT, [8])])
    nodes = [helper.make_node("Scan", ["h0", "seq"], ["h_last", "ys"], name="Scan_0",
                              num_scan_inputs=1, body=body)]
    graph = helper.make_graph(
        nodes, "scan",
        [tensor("seq", TensorProto.FLOAT, [5, 8]), tensor("h0", TensorProto.FLOAT, [8])],
        [tensor("h_last", TensorProto.FLOAT, [8]), tensor("ys", TensorProto.FLOAT, [5, 8])],
        initializer=[weight("Wx", 8, 8), weight("Wh", 8, 8)])
    return model(graph)


def nested():
    then_branch = helper.make_graph(
        [const_node("inner_trip", 3), const_node("inner_go", True, np.bool_),
         helper.make_node("Loop", ["inner_trip", "inner_go", "x"], ["inner_h", "inner_all"],
                          name="Loop_inner", body=loop_body("inner", "W"))],
        "then_branch", [], [tensor("inner_h", TensorProto.FLOAT, [1, 8])])
    else_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["else_mm"], name="else_matmul")],
        "else_branch", [], [tensor("else_mm", TensorProto.FLOAT, [1, 8])])
    nodes = [const_node("one", 1),
             helper.make_node("Equal", ["mode", "one"], ["is_one"], name="is_mode_one"),
             helper.make_node("If", ["is_one"], ["y"], name="If_outer", then_branch=then_branch,
                              else_branch=else_branch)]
    graph = helper.make_graph(
        nodes, "nested",
        [tensor("x", TensorProto.FLOAT, [1, 8]), tensor("mode", TensorProto.INT64, [])],
        [tensor("y", TensorProto.FLOAT, [1, 8])], initializer=[weight("W", 8, 8)])
    return model(graph)


def unexpandable():
    # Loop_while: continue while sum(h) < 1e9, which the body computes (a data-dependent stop).
    while_condition = [
        helper.make_node("ReduceSum", ["while_h"], ["while_sum"], name="while_reduce",
                         keepdims=0),
        const_node("while_limit", 1e9, np.float32),
        helper.make_node("Less", ["while_sum", "while_limit"], ["while_cond"], name="while_less")]
    nodes = [const_node("big_trip", 100), const_node("go", True, np.bool_),
             const_node("while_trip", 5),
             helper.make_node("Loop", ["big_trip", "go", "x"], ["a", "a_all"], name="Loop_big",
                              body=loop_body("big", "W")),
             helper.make_node("Loop", ["while_trip", "go", "x"], ["b"], name="Loop_while",
                              body=loop_body("while", "W", while_condition, scan=False))]
    graph = helper.make_graph(
        nodes, "unexpandable", [tensor("x", TensorProto.FLOAT, [1, 8])],
        [tensor("a", TensorProto.FLOAT, [1, 8]), tensor("b", TensorProto.FLOAT, [1, 8])],
        initializer=[weight("W", 8, 8)])
    return model(graph)


MODELS = {"if_conv": if_conv, "loop": loop, "scan": scan, "nested": nested,
          "unexpandable": unexpandable}


def main():
    cache = os.environ.get("CONVGATE_FIXTURE_CACHE",
                           os.path.join(os.path.expanduser("~"), ".cache", "convgate-fixtures"))
    with open(__file__, "rb") as script:
        key = hashlib.sha256(script.read() + onnx.__version__.encode()).hexdigest()[:16]
    folder = os.path.join(cache, "subgraphs-" + key)
    if not os.path.isdir(folder):
        os.makedirs(cache, exist_ok=True)
        staging = tempfile.mkdtemp(prefix="subgraphs-", dir=cache)
        try:
            for name, build in MODELS.items():
                onnx.save(build(), os.path.join(staging, name + ".onnx"))
            try:
                os.rename(staging, folder)
            except OSError:  # a concurrent run got there first
                if not os.path.isdir(folder):
                    raise
        except Exception as error:  # noqa: BLE001 - reported, exit 1
            print("[subgraph-fixtures] %s" % error, file=sys.stderr)
            return 1
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
