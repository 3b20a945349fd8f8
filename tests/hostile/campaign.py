#!/usr/bin/python3
"""Hostile inputs through every convgate command: the fault campaign of issue 10, kept as a test.

Every input is generated here, by code (nothing large is committed): crafted ONNX models that lie
about their shapes, names and types; byte-level mutations of a real model; npy, npz and TensorProto
files with lying headers, zip bombs and path tricks; report.json and policy files that are not what
they claim; special files (FIFOs, /dev/zero); corrupt conversion caches; misbehaving exec runners;
hostile --out folders. Each goes through the commands that read it, and each run is judged:

  - the exit code is 1, 2 or 3 (0 too where the input may be valid after all, e.g. a mutation
    that hit padding); never 4 (convgate's own bug), never a signal;
  - a failure names the file it is about (its basename appears in stderr or stdout);
  - it ends within its time bound (no hang) and its peak RSS stays under the bound, each run
    under a 3 GiB data limit from which convgate derives its size limits (see DATA_LIMIT_BYTES).

Usage: campaign.py BUILD_DIR [--quick] [--jobs N] [--keep DIR] [--json FILE]
  --quick   every crafted case, 60 mutations (CI); without it, 1,500 mutations (the campaign)
Prints the figures: inputs, runs, exits by code, hangs, peak RSS, and every violation.
Exit 0 when no run violates the rules.
"""

import argparse
import collections
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PEAK_RSS_LIMIT_MB = 2048  # the bound the README states for one convgate process on bad input
# Every run gets this data limit (RLIMIT_DATA, a CI job's `ulimit -d`), from which convgate
# derives its size limits (--max-tensor-bytes, --max-run-bytes: half, 1.5 GiB). What a run may
# hold is then the same on any machine: on a 23 GiB one the defaults would be 11.5 GiB, and a
# model declaring an 8 GiB run would rightly be run, not refused. 1.5 GiB of tensors leaves the
# runtime room under PEAK_RSS_LIMIT_MB.
DATA_LIMIT_BYTES = 3 << 30
TIME_LIMIT_S = 60  # a hang is anything slower; convgate's own limits are set lower below
ALLOWED = {1, 2, 3}


# ----------------------------------------------------------------------------------------------
# Cases


class Case:
    """One run: argv after `convgate`, what it is about, and what may legitimately happen."""

    def __init__(self, name, args, about, may_pass=False, env=None, stdin=None, timeout=None):
        self.name = name
        self.args = args
        self.about = about  # the file the message must name (basename), or None
        self.may_pass = may_pass
        self.env = env or {}
        self.timeout = timeout or TIME_LIMIT_S


def save_model(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def tiny_model(inputs, outputs, nodes, initializers=(), opset=17, ir=8, name="g", **kwargs):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **kwargs)
    model.ir_version = ir
    return model


def identity_model(dtype=TensorProto.FLOAT, shape=(1, 4), in_name="x", out_name="y"):
    return tiny_model([helper.make_tensor_value_info(in_name, dtype, shape)],
                      [helper.make_tensor_value_info(out_name, dtype, shape)],
                      [helper.make_node("Identity", [in_name], [out_name])])


def crafted_models(d):
    """ONNX models that lie, each a file in d. Returns [(path, may_pass, extra_args)]."""
    out = []

    def add(name, model, may_pass=False, args=()):
        out.append((save_model(model, os.path.join(d, name)), may_pass, list(args)))

    add("huge_input.onnx", identity_model(shape=(1, 1024, 1024, 1024)))
    add("huge_input_int64.onnx", identity_model(dtype=TensorProto.INT64, shape=(1 << 20, 1 << 20)))
    add("elements_2p61.onnx", identity_model(shape=(1 << 31, 1 << 30)))
    # Valid, if odd: ONNX Runtime runs them, so may convgate.
    add("rank_1000.onnx", identity_model(shape=tuple([1] * 1000)), may_pass=True)
    add("negative_dim.onnx", identity_model(shape=(1, -5)), may_pass=True)
    add("float8_input.onnx", identity_model(dtype=17, shape=(1, 4)))  # FLOAT8E4M3FN (IR 9)
    add("complex_input.onnx", identity_model(dtype=TensorProto.COMPLEX64))
    seq = tiny_model([helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
                     [helper.make_node("SequenceAt", ["s", "i"], ["y"])],
                     [numpy_helper.from_array(np.array(0, dtype=np.int64), "i")])
    add("sequence_input.onnx", seq)
    add("nul_output_name.onnx", identity_model(out_name="y\x00hidden"))
    m = identity_model()
    m.producer_name = "conv\udcffgate".encode("utf-8", "surrogateescape").decode("latin-1")
    add("latin1_producer.onnx", m, may_pass=True)
    raw = identity_model().SerializeToString()
    # Invalid UTF-8 in the input/output names and the producer, written at the byte level.
    bad = raw.replace(b"\x12\x01y", b"\x12\x01\xff")  # output name 'y' -> 0xFF
    with open(os.path.join(d, "utf8_output_name.onnx"), "wb") as f:
        f.write(bad)
    out.append((os.path.join(d, "utf8_output_name.onnx"), True, []))
    bad_in = raw.replace(b"\n\x01x", b"\n\x01\xfe")
    with open(os.path.join(d, "utf8_input_name.onnx"), "wb") as f:
        f.write(bad_in)
    out.append((os.path.join(d, "utf8_input_name.onnx"), True, []))
    # External data that escapes the model's folder, or is missing.
    # "self" reads the model file's own first bytes as weights: inside its folder, so allowed.
    for tag, location in (("escape", "../../../../etc/passwd"), ("absolute", "/etc/passwd"),
                          ("missing", "nowhere.bin"), ("self", "external_self.onnx")):
        w = numpy_helper.from_array(np.ones((4, 4), dtype=np.float32), "w")
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value=location)
        w.external_data.add(key="length", value="64")
        mm = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
                        [helper.make_node("MatMul", ["x", "w"], ["y"])], [w])
        add(f"external_{tag}.onnx", mm, may_pass=tag == "self")
    # A Loop that would run for ever: convgate's run timeout must stop it.
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.ones(1, dtype=np.float32), "one")])
    loop = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                      [helper.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)],
                      [numpy_helper.from_array(np.array(10**12, dtype=np.int64), "trip"),
                       numpy_helper.from_array(np.array(True), "cond")])
    add("endless_loop.onnx", loop, args=["--run-timeout", "3"])
    add("empty_graph.onnx", tiny_model([], [], []))
    add("no_outputs.onnx", tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                      [], []))
    cyc = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                     [helper.make_node("Add", ["x", "z"], ["y"]),
                      helper.make_node("Identity", ["y"], ["z"])])
    add("cycle.onnx", cyc)
    add("unknown_op.onnx",
        tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                   [helper.make_node("NoSuchOp", ["x"], ["y"], domain="evil.domain")]))
    add("opset_1.onnx", identity_model(), may_pass=True)
    m = identity_model()
    m.opset_import[0].version = 1
    add("opset_really_1.onnx", m, may_pass=True)
    m = identity_model()
    m.ir_version = 99
    add("ir_99.onnx", m)
    dup = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                     [helper.make_node("Identity", ["x"], ["y"]),
                      helper.make_node("Identity", ["x"], ["y"])])
    add("duplicate_output.onnx", dup)
    w = numpy_helper.from_array(np.ones(4, dtype=np.float32), "w")
    w.raw_data = b"\x00" * 3  # 3 bytes for 4 floats
    add("short_initializer.onnx",
        tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                   [helper.make_node("Add", ["x", "w"], ["y"])], [w]))
    return out


def mutations(source, d, count, rng):
    """Byte-level damage to a real model: flips, truncations, overwrites, splices."""
    data = open(source, "rb").read()
    out = []
    for idx in range(count):
        kind = idx % 4
        buf = bytearray(data)
        if kind == 0:  # flip a few bits
            for _ in range(rng.randint(1, 8)):
                pos = rng.randrange(len(buf))
                buf[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncate
            buf = buf[:rng.randrange(len(buf))]
        elif kind == 2:  # overwrite a run with 0xFF / 0x00 / random
            pos = rng.randrange(len(buf))
            n = rng.randint(1, 64)
            fill = rng.choice([b"\xff", b"\x00", None])
            chunk = bytes(rng.randrange(256) for _ in range(n)) if fill is None else fill * n
            buf[pos:pos + n] = chunk
        else:  # duplicate a slice (lengths now lie)
            a = rng.randrange(len(buf))
            b = min(len(buf), a + rng.randint(1, 256))
            buf[a:a] = buf[a:b]
        path = os.path.join(d, f"mutant_{idx}.onnx")
        with open(path, "wb") as f:
            f.write(bytes(buf))
        out.append(path)
    return out


def npy_bytes(header_dict, payload):
    header = repr(header_dict).encode("latin-1")
    pad = 64 - ((10 + len(header) + 1) % 64)
    header += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload


def crafted_tensor_files(d):
    """npy, npz and .pb files that lie. Returns [path]."""
    files = {}
    good = np.random.default_rng(0).random((1, 3, 16, 16), dtype=np.float32)
    files["bad_magic.npy"] = b"\x93NUMPX\x01\x00" + b"\x00" * 100
    files["truncated.npy"] = npy_bytes({"descr": "<f4", "fortran_order": False,
                                        "shape": (1, 3, 16, 16)}, good.tobytes()[:100])
    files["huge_shape.npy"] = npy_bytes({"descr": "<f4", "fortran_order": False,
                                         "shape": (1 << 40, 1 << 20)}, b"\x00" * 16)
    files["negative_shape.npy"] = npy_bytes({"descr": "<f4", "fortran_order": False,
                                             "shape": (-1, 4)}, b"")
    files["object_dtype.npy"] = npy_bytes({"descr": "|O", "fortran_order": False,
                                           "shape": (2,)}, b"\x80\x04N.")
    files["bad_header_syntax.npy"] = npy_bytes({"descr": "<f4"}, b"")[:-1] + b"{{{\n"
    files["header_len_lies.npy"] = b"\x93NUMPY\x01\x00" + struct.pack("<H", 65000) + b"{}"
    files["bytes_invalid_utf8.npy"] = npy_bytes({"descr": "|S4", "fortran_order": False,
                                                 "shape": (2,)}, b"\xff\xfe\xfd\xfc\x80abc")
    files["bigendian.npy"] = npy_bytes({"descr": ">f8", "fortran_order": False,
                                        "shape": (2,)}, struct.pack(">dd", 1.0, 2.0))
    files["fortran.npy"] = npy_bytes({"descr": "<f4", "fortran_order": True,
                                      "shape": (2, 2)}, struct.pack("<4f", 1, 2, 3, 4))
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    paths = [os.path.join(d, name) for name in files]

    def npz(name, members, compression=zipfile.ZIP_STORED, hostile=True):
        path = os.path.join(d, name)
        with zipfile.ZipFile(path, "w", compression) as z:
            for member, data in members.items():
                z.writestr(member, data)
        if hostile:
            paths.append(path)
        return path

    good_npy = npy_bytes({"descr": "<f4", "fortran_order": False, "shape": (1, 3, 16, 16)},
                         good.tobytes())
    npz("truncated_member.npz", {"image.npy": good_npy[:200]})
    npz("not_npy_member.npz", {"image.npy": b"hello"})
    npz("traversal_name.npz", {"../../escape.npy": good_npy})
    npz("utf8_member_name.npz", {"\udcff.npy".encode("utf-8", "surrogateescape").decode(
        "latin-1"): good_npy})
    npz("duplicate_member.npz", {"image.npy": good_npy})
    with warnings.catch_warnings():  # the duplicate is the point
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(paths[-1], "a") as z:
            z.writestr("image.npy", good_npy)
    npz("empty.npz", {})
    # A zip bomb: 1 GiB of zeros as an npy that declares it, compressed to ~1 MB.
    bomb = os.path.join(d, "bomb_1gib.npz")
    header = npy_bytes({"descr": "<f4", "fortran_order": False, "shape": (1, 256, 1024, 1024)},
                       b"")
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("image.npy", "w", force_zip64=True) as member:
            member.write(header)
            zeros = b"\x00" * (16 << 20)
            for _ in range(64):
                member.write(zeros)
    paths.append(bomb)
    # A member whose central directory lies about its size.
    liar = os.path.join(d, "size_liar.npz")
    with open(npz("size_liar_src.npz", {"image.npy": good_npy}, hostile=False), "rb") as f:
        blob = bytearray(f.read())
    cd = blob.rfind(b"PK\x01\x02")
    if cd >= 0:
        blob[cd + 24:cd + 28] = struct.pack("<I", 0xFFFFFFF0)  # uncompressed size
    with open(liar, "wb") as f:
        f.write(bytes(blob))
    paths.append(liar)
    with open(os.path.join(d, "garbage.npz"), "wb") as f:
        f.write(b"PK\x03\x04" + os.urandom(200))
    paths.append(os.path.join(d, "garbage.npz"))
    return paths


def crafted_test_cases(d):
    """ONNX test-case folders with damaged .pb files. Returns [folder]."""
    out = []
    specs = {
        "pb_garbage": b"\x08\x01\x12\xff\xff\xff\xff\x0f",
        "pb_short_raw": None,
        "pb_huge_dims": None,
    }
    for name, blob in specs.items():
        folder = os.path.join(d, name, "test_data_set_0")
        os.makedirs(folder)
        if name == "pb_short_raw":
            t = numpy_helper.from_array(np.ones((1, 3, 16, 16), dtype=np.float32), "image")
            t.raw_data = t.raw_data[:10]
            blob = t.SerializeToString()
        elif name == "pb_huge_dims":
            t = TensorProto(name="image", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 30])
            blob = t.SerializeToString()
        with open(os.path.join(folder, "input_0.pb"), "wb") as f:
            f.write(blob)
        with open(os.path.join(folder, "output_0.pb"), "wb") as f:
            f.write(blob)
        out.append(os.path.dirname(folder))
    return out


def crafted_reports(d, real_report):
    out = {}
    out["not_json.json"] = b"{not json"
    out["deep_nesting.json"] = b"[" * 200000 + b"]" * 200000
    out["wrong_schema.json"] = json.dumps({"schema_version": 999, "command": "compare"}).encode()
    out["run_report.json"] = json.dumps({"schema_version": 1, "command": "run"}).encode()
    out["invalid_utf8.json"] = b'{"schema_version": 1, "command": "compare\xff"}'
    out["huge_number.json"] = b'{"schema_version": 1e999999, "command": "compare"}'
    out["empty.json"] = b""
    if real_report:
        rep = json.load(open(real_report))
        # A compare report's checks are its "results", each comparison under "stats".
        broken = json.loads(json.dumps(rep))
        for check in broken.get("results", []):
            check["stats"] = "nonsense"
        out["checks_nonsense.json"] = json.dumps(broken).encode()
        broken = json.loads(json.dumps(rep))
        for check in broken.get("results", []):
            if isinstance(check.get("stats"), dict):
                # Schema 2: the frontier is in every error summary.
                check["stats"]["error_summary"]["frontier"]["points"] = [-5, 10**30]
        out["histogram_lies.json"] = json.dumps(broken).encode()
        broken = json.loads(json.dumps(rep))
        for check in broken.get("results", []):
            check["verdict"] = "maybe"
            check["sample"] = -1
        out["verdict_nonsense.json"] = json.dumps(broken).encode()
        broken = json.loads(json.dumps(rep))
        broken["results"] = [broken["results"][0]] * 5000 if broken.get("results") else []
        out["many_checks.json"] = json.dumps(broken).encode()
    paths = []
    for name, blob in out.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(blob)
        paths.append(path)
    return paths


def crafted_policies(d):
    out = {
        "bad_yaml.yaml": "atol: [1, 2\n",
        "billion_laughs.yaml": "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                               "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c]\n"
                               "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e]\n"
                               "atol: *f\n",
        "deep.yaml": "a: " + "[" * 50000 + "]" * 50000 + "\n",
        "unknown_key.yaml": "atoll: 1e-3\n",
        "negative.yaml": "atol: -1\n",
        "nan.yaml": "atol: .nan\n",
        "invalid_utf8.yaml": "outputs:\n  \xff\xfe: {atol: 1}\n",
        "binary.yaml": None,
    }
    paths = []
    for name, text in out.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(os.urandom(300) if text is None else text.encode("latin-1"))
        paths.append(path)
    return paths


def special_files(d):
    fifo = os.path.join(d, "fifo.onnx")
    os.mkfifo(fifo)
    fifo_npz = os.path.join(d, "fifo.npz")
    os.mkfifo(fifo_npz)
    loop = os.path.join(d, "loop.onnx")
    os.symlink(loop, loop)
    dangling = os.path.join(d, "dangling.onnx")
    os.symlink(os.path.join(d, "nowhere"), dangling)
    folder = os.path.join(d, "a_folder.onnx")
    os.makedirs(folder)
    return [fifo, fifo_npz, "/dev/zero", "/dev/urandom", "/dev/null", loop, dangling, folder]


def corrupt_caches(d, model):
    """Cache folders whose entries are damaged. Returns [(cache_dir, description)]."""
    caches = []
    base = os.path.join(d, "caches")
    os.makedirs(base)
    for tag in ("garbage_record", "fifo_record", "missing_model", "entries_is_file",
                "huge_record", "record_is_dir"):
        root = os.path.join(base, tag)
        entries = os.path.join(root, "conversions")
        entry = os.path.join(entries, "0" * 64)
        if tag == "entries_is_file":
            os.makedirs(root)
            open(entries, "w").write("not a folder")
        else:
            os.makedirs(entry)
            record = os.path.join(entry, "record.json")
            if tag == "garbage_record":
                open(record, "wb").write(b"\xff{garbage")
            elif tag == "fifo_record":
                os.mkfifo(record)
            elif tag == "missing_model":
                open(record, "w").write(json.dumps({"key": "0" * 64, "kind": "fp16"}))
            elif tag == "huge_record":
                with open(record, "wb") as f:
                    f.write(b'{"key": "' + b"a" * (64 << 20) + b'"}')
            elif tag == "record_is_dir":
                os.makedirs(record)
        caches.append(root)
    return caches


RUNNER = r'''#!/usr/bin/python3
import os, sys, numpy as np
mode = os.environ.get("HOSTILE_MODE", "")
model, inputs, outputs = sys.argv[1:4]
if mode == "binary_stderr":
    sys.stderr.buffer.write(b"\xff\xfe\x00 not utf-8 \x80\n"); sys.exit(1)
if mode == "no_outputs":
    sys.exit(0)
if mode == "garbage_outputs":
    open(outputs, "wb").write(os.urandom(500)); sys.exit(0)
if mode == "nul_name":
    np.savez(outputs, **{"logits\x00x": np.zeros((1, 10), np.float32)}); sys.exit(0)
if mode == "wrong_shape":
    np.savez(outputs, logits=np.zeros((7, 7), np.float32), probs=np.zeros((1, 10), np.float32)); sys.exit(0)
if mode == "hang":
    import time; time.sleep(3600)
if mode == "bytes_outputs":
    np.savez(outputs, logits=np.array([b"\xff\xfe", b"ok"]), probs=np.zeros((1, 10), np.float32)); sys.exit(0)
if mode == "huge_outputs":
    np.savez(outputs, logits=np.zeros((1, 10), np.float32), probs=np.zeros((64, 1024, 1024), np.float32)); sys.exit(0)
sys.exit(3)
'''


def build_cases(work, build, quick, rng):
    examples = os.path.join(build, "examples")
    model = os.path.join(examples, "tinycnn.onnx")
    converted = os.path.join(examples, "tinycnn_converted.onnx")
    cases = []
    inputs_dir = os.path.join(work, "inputs")
    os.makedirs(inputs_dir)

    # A real report, for the report cases.
    good = os.path.join(work, "good")
    subprocess.run([CONVGATE, "compare", model, converted, "--samples", "2", "--out", good,
                    "--save-inputs", os.path.join(work, "good_inputs.npz")],
                   capture_output=True, check=False)
    real_report = os.path.join(good, "report.json")
    if not os.path.exists(real_report):
        real_report = None

    out_dir = os.path.join(work, "out")

    for path, may_pass, extra in crafted_models(inputs_dir):
        base = os.path.basename(path)
        cases += [
            Case(f"inspect {base}", ["inspect", path], base, may_pass=True),
            Case(f"run {base}", ["run", path] + extra, base, may_pass),
            Case(f"compare {base}", ["compare", path, path] + extra, base, may_pass),
            Case(f"convert {base}", ["convert", path, "--to", "fp16", "-o",
                                     os.path.join(out_dir, base + ".fp16.onnx"), "--no-cache"],
                 base, may_pass=True),
            Case(f"transform {base}", ["transform", path, "--pass", "eliminate_identity", "-o",
                                       os.path.join(out_dir, base + ".t.onnx")], base,
                 may_pass=True),
            Case(f"verify {base}", ["verify", path, "--to", "opset:17", "--no-cache"] + extra,
                 base, may_pass),
        ]
    n_mut = 60 if quick else 1500
    for path in mutations(model, inputs_dir, n_mut, rng):
        base = os.path.basename(path)
        cmd = rng.choice([["inspect", path], ["run", path], ["compare", model, path],
                          ["convert", path, "--to", "opset:17", "--no-cache", "-o",
                           os.path.join(out_dir, base)]])
        cases.append(Case(f"{cmd[0]} {base}", cmd, base, may_pass=True))

    for path in crafted_tensor_files(inputs_dir):
        base = os.path.basename(path)
        # Valid files with odd contents: a member named "../../escape.npy" is only a name (convgate
        # never extracts to disk), big-endian and Fortran-order arrays are numpy's own.
        may = base in ("bigendian.npy", "fortran.npy", "duplicate_member.npz",
                       "bytes_invalid_utf8.npy", "utf8_member_name.npz", "traversal_name.npz")
        cases += [
            # The 1 GiB bomb is one tensor under the 1.5 GiB limit: inspect streams it into its
            # buffer and shows it (what its tensor takes, no copy). Two of them are refused.
            Case(f"inspect {base}", ["inspect", path], base,
                 may_pass=may or base in ("empty.npz", "bomb_1gib.npz")),
            Case(f"load-inputs {base}", ["compare", model, converted, "--load-inputs", path],
                 base, may_pass=False),
            Case(f"saved outputs {base}", ["compare", path, path], base, may_pass=may),
        ]
    for folder in crafted_test_cases(inputs_dir):
        base = os.path.basename(folder)
        cases += [
            Case(f"inspect {base}", ["inspect", folder], base),
            Case(f"test case {base}", ["compare", folder, model], base),
            Case(f"load-inputs {base}", ["compare", model, converted, "--load-inputs", folder],
                 base),
        ]
    for path in crafted_reports(inputs_dir, real_report):
        base = os.path.basename(path)
        cases.append(Case(f"check {base}", ["check", path, "--atol", "1e-3"], base,
                          may_pass=base == "many_checks.json"))
    for path in crafted_policies(inputs_dir):
        base = os.path.basename(path)
        cases.append(Case(f"policy {base}", ["compare", model, converted, "--policy", path], base))
    for path in special_files(inputs_dir):
        base = os.path.basename(path)
        cases += [
            Case(f"inspect special {base}", ["inspect", path], base),
            Case(f"run special {base}", ["run", path], base),
            Case(f"load-inputs special {base}", ["compare", model, converted, "--load-inputs",
                                                 path], base),
            Case(f"check special {base}", ["check", path], base),
            Case(f"policy special {base}", ["compare", model, converted, "--policy", path], base),
            Case(f"convert special {base}", ["convert", path, "--to", "fp16", "--timeout", "20",
                                             "-o", os.path.join(out_dir, "special.onnx")], base),
        ]
    for cache in corrupt_caches(inputs_dir, model):
        tag = os.path.basename(cache)
        for sub in (["cache", "ls"], ["cache", "prune", "--max-bytes", "0"]):
            cases.append(Case(f"{' '.join(sub)} {tag}", sub + ["--cache-dir", cache], None,
                              may_pass=True))
        cases.append(Case(f"verify with cache {tag}", ["verify", model, "--to", "fp16", "--cache-dir",
                                                       cache, "--atol", "1", "--rtol", "1"], None,
                          may_pass=True))
    runner = os.path.join(work, "hostile_runner.py")
    with open(runner, "w") as f:
        f.write(RUNNER)
    os.chmod(runner, 0o755)
    for mode in ("binary_stderr", "no_outputs", "garbage_outputs", "nul_name", "wrong_shape",
                 "hang", "bytes_outputs", "huge_outputs"):
        args = ["compare", model, model, "--target-exec", f"{runner} {{model}} {{inputs}} {{outputs}}"]
        if mode == "hang":
            args += ["--exec-timeout", "3"]
        cases.append(Case(f"exec runner {mode}", args, None, env={"HOSTILE_MODE": mode}))
    # Hostile --out folders and argv.
    a_file = os.path.join(work, "a_file")
    open(a_file, "w").write("x")
    for tag, out in (("out is a file", a_file), ("out under a file", os.path.join(a_file, "sub")),
                     ("out /proc", "/proc/self/convgate")):
        cases.append(Case(f"--out {tag}", ["compare", model, converted, "--out", out], None))
    bad_arg = b"\xff\xfe.onnx".decode("utf-8", "surrogateescape")
    cases.append(Case("argv invalid utf-8 path", ["compare", model, bad_arg], None))
    cases.append(Case("argv invalid utf-8 out", ["compare", model, converted, "--out",
                                                 os.path.join(out_dir, bad_arg)], None,
                      may_pass=True))
    cases.append(Case("argv 100 KB", ["compare", model, converted, "--atol", "x" * 100000], None))
    cases.append(Case("argv newline path", ["run", model + "\nx"], None))
    return cases


# ----------------------------------------------------------------------------------------------
# Running


def run_case(case, work):
    """Runs one case; returns (exit code, stdout, stderr, hung, seconds, peak RSS MiB)."""
    env = dict(os.environ)
    env.update(case.env)
    env.setdefault("CONVGATE_CACHE_DIR", os.path.join(work, "cache"))
    env["NO_COLOR"] = "1"
    start = time.monotonic()
    # prlimit sets the limit and execs convgate: the pid (and so wait4's peak RSS) is convgate's.
    args = (["/usr/bin/prlimit", f"--data={DATA_LIMIT_BYTES}", "--", CONVGATE] +
            [a.encode("utf-8", "surrogateescape") for a in case.args])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=env, cwd=work, start_new_session=True)
    hung = []

    def kill():
        hung.append(True)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(case.timeout, kill)
    timer.start()
    chunks = {"out": b"", "err": b""}

    def drain(stream, key):
        chunks[key] = stream.read()

    readers = [threading.Thread(target=drain, args=(proc.stdout, "out"), daemon=True),
               threading.Thread(target=drain, args=(proc.stderr, "err"), daemon=True)]
    for reader in readers:
        reader.start()
    # wait4 gives this process's own peak RSS; a grandchild that keeps the pipes open (a hung
    # exec runner convgate failed to kill) must not hang the campaign, hence the bounded joins.
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    for reader in readers:
        reader.join(timeout=5)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    return proc.returncode, chunks["out"], chunks["err"], bool(hung), elapsed, usage.ru_maxrss / 1024


def judge(case, code, out, err, hung):
    text = out.decode("utf-8", "replace") + err.decode("utf-8", "replace")
    problems = []
    if hung:
        problems.append(f"hung past {case.timeout} s")
    elif code < 0:
        problems.append(f"killed by signal {-code}")
    elif code == 4:
        problems.append("exit 4 (internal error) on bad input")
    elif code not in ALLOWED and not (code == 0 and case.may_pass):
        problems.append(f"exit {code}")
    if code in ALLOWED and case.about and case.about not in text and code != 1:
        problems.append(f"the message does not name {case.about}")
    return problems


CONVGATE = None


def main():
    global CONVGATE
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep")
    parser.add_argument("--json")
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    CONVGATE = os.path.join(build, "src", "cli", "convgate")
    work = args.keep or tempfile.mkdtemp(prefix="convgate_hostile_")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(args.seed)
    cases = build_cases(work, build, args.quick, rng)
    results = []

    def one(case):
        return (case,) + run_case(case, work)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, cases))
    codes = collections.Counter()
    violations = []
    hangs = 0
    slowest = 0.0
    peak_mb, peak_case = 0.0, None
    for case, code, out, err, hung, elapsed, rss_mb in results:
        codes["hang" if hung else code] += 1
        hangs += hung
        slowest = max(slowest, elapsed)
        if rss_mb > peak_mb:
            peak_mb, peak_case = rss_mb, case.name
        problems = judge(case, code, out, err, hung)
        if rss_mb > PEAK_RSS_LIMIT_MB:
            problems.append(f"peak RSS {rss_mb:.0f} MiB over {PEAK_RSS_LIMIT_MB} MiB")
        for problem in problems:
            violations.append((case, problem, err.decode("utf-8", "replace")[-400:]))
    print(f"hostile inputs: {len(cases)} runs over {len(os.listdir(os.path.join(work, 'inputs')))}"
          f" generated inputs")
    print("exits: " + ", ".join(f"{k}: {v}" for k, v in sorted(codes.items(), key=str)))
    print(f"hangs: {hangs}; slowest run {slowest:.1f} s; peak RSS {peak_mb:.0f} MiB "
          f"({peak_case}; bound {PEAK_RSS_LIMIT_MB} MiB per run)")
    for case, problem, err in violations:
        name = case.name if case else "campaign"
        print(f"VIOLATION {name}: {problem}")
        if case:
            print("  convgate " + " ".join(str(a)[:200] for a in case.args))
            print("  " + err.replace("\n", "\n  "))
    print(f"{len(violations)} violations")
    if args.json:
        json.dump({"runs": len(cases), "exits": {str(k): v for k, v in codes.items()},
                   "hangs": hangs, "peak_rss_mib": peak_mb, "violations": len(violations)},
                  open(args.json, "w"))
    if not args.keep and not violations:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
