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
import re
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

PEAK_RSS_LIMIT_MB = 2048  # the bound docs/safety.md states for one convgate process on bad input
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

    def __init__(self, name, args, about, may_pass=False, env=None, stdin=None, timeout=None,
                 check=None, then=None, max_rss_mb=None, allowed=None):
        self.name = name
        self.args = args
        self.about = about  # the file the message must name (basename), or None
        self.may_pass = may_pass
        self.env = env or {}
        self.timeout = timeout or TIME_LIMIT_S
        # check(code, stdout, stderr) -> [problem]: what else the run must (not) do (issue 32:
        # no secret in any output or file, valid JSON, ...), called after the run.
        self.check = check
        # A case run after this one, in the same worker (history after the run that recorded).
        self.then = then
        self.max_rss_mb = max_rss_mb or PEAK_RSS_LIMIT_MB
        self.allowed = allowed or ALLOWED


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
# The fleet surface (issue 32): batch manifests, stores, pipelines, the hub's files


SECRET = "S3CRETpw"


def no_secret(*paths):
    """A check: SECRET is in no output and in none of these files (or files under folders)."""
    def check(code, out, err):
        problems = []
        if SECRET.encode() in out:
            problems.append("the password is on stdout")
        if SECRET.encode() in err:
            problems.append("the password is on stderr")
        for path in paths:
            files = [path] if os.path.isfile(path) else [
                os.path.join(root, name) for root, _, names in os.walk(path) for name in names]
            for file in files:
                with open(file, "rb") as f:
                    if SECRET.encode() in f.read():
                        problems.append(f"the password is in {file}")
        return problems
    return check


def valid_json(path=None, stdout=False):
    """A check: the file (or stdout) is JSON."""
    def check(code, out, err):
        try:
            if stdout:
                json.loads(out)
            if path is not None:
                with open(path, "rb") as f:
                    json.loads(f.read())
        except (OSError, ValueError) as e:
            return [f"not JSON ({path or 'stdout'}): {e}"]
        return []
    return check


def all_checks(*checks):
    return lambda code, out, err: [p for c in checks for p in c(code, out, err)]


def mentions(text):
    return lambda code, out, err: ([] if text.encode() in out + err
                                   else [f"the message does not say '{text}'"])


HUBS = []


def start_fake_hub(repos, faults):
    """Starts tests/fixtures/fake_hub.py; its port, or None when it does not start."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                          "fake_hub.py")
    args = ["/usr/bin/python3", script, "--repos", repos]
    for fault in faults:
        args += ["--fault", fault]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    HUBS.append(proc)
    line = proc.stdout.readline().decode()
    return int(line.split()[1]) if line.startswith("PORT") else None


def fleet_cases(work, build):
    d = os.path.join(work, "fleet")
    os.makedirs(d)
    model = os.path.join(build, "examples", "tinycnn.onnx")
    cases = []

    # 1. A database password in argv: report.json, --json, the store's runs row.
    for idx, (command, extra) in enumerate((("run", []), ("compare", [model]),
                                            ("verify", ["--to", "opset:17", "--no-cache"]))):
        for tag, location in (("url", f"postgresql://u:{SECRET}@/x?host=/nonexistent"),
                              ("keywords", f"host=/nonexistent password={SECRET} dbname=x")):
            out = os.path.join(d, f"secret_{command}_{tag}")
            cases.append(Case(f"fleet secret {command} {tag}",
                              [command, model] + extra + ["--store", location, "--out", out,
                                                          "--json"],
                              None, may_pass=True, check=no_secret(out)))
    runner = os.path.join(d, "runner_exit3.sh")
    with open(runner, "w") as f:
        f.write("#!/bin/sh\nexit 3\n")
    os.chmod(runner, 0o755)
    store = os.path.join(d, "secret_store.db")
    out = os.path.join(d, "secret_exec")
    cases.append(Case("fleet secret store runs.argv",
                      ["compare", model, model, "--store", store, "--out", out,
                       "--target-exec", f"{runner} {{model}} {{inputs}} {{outputs}} "
                                        f"postgresql://u:{SECRET}@db/x",
                       "--source-exec", f"{runner} {{model}} {{inputs}} {{outputs}} "
                                        f"password={SECRET}"],
                      None, check=no_secret(store, out)))

    # 2. Pipelines and feedback loops under --max-run-bytes; a value that grows every step.
    big = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1 << 20])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1 << 20])],
                     [helper.make_node("Identity", ["x"], ["y"])])
    save_model(big, os.path.join(d, "big.onnx"))
    with open(os.path.join(d, "big_steps.yaml"), "w") as f:
        f.write("nodes:\n  - name: a\n    model: big.onnx\n  - name: b\n    model: big.onnx\n"
                "inputs:\n  - {name: x, to: a.x}\nedges:\n  - {from: a.y, to: b.x}\n"
                "outputs:\n  - {name: y, from: b.y}\n")
    cases.append(Case("fleet pipeline 2000 steps of 4 MB", ["pipeline",
                      os.path.join(d, "big_steps.yaml"), "--steps", "2000", "--max-run-bytes",
                      "256MiB"], None, check=mentions("--max-run-bytes"), max_rss_mb=700,
                      timeout=60))
    # Without a target nothing but the pipeline outputs' checks needs a step once it is done:
    # 60 steps of 4 MB (two nodes, 16 MB of records a step) run in 64 MiB of inputs.
    cases.append(Case("fleet pipeline steps not kept", ["pipeline",
                      os.path.join(d, "big_steps.yaml"), "--steps", "12", "--max-run-bytes",
                      "100MiB"], None, may_pass=True, max_rss_mb=700, allowed={1}))
    rnn = tiny_model([helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                     [helper.make_node("Identity", ["x"], ["y"])])
    save_model(rnn, os.path.join(d, "loop.onnx"))
    cases.append(Case("fleet feedback a million steps", ["compare", os.path.join(d, "loop.onnx"),
                      os.path.join(d, "loop.onnx"), "--feedback", "y=x", "--steps", "1000000",
                      "--max-run-bytes", "32MiB"], None, check=mentions("--max-run-bytes"),
                      max_rss_mb=700))
    # A KV cache: Concat(state, x) grows every step, 1 MiB a step, without a target: only the
    # state is kept, and it is what goes over the limit.
    grow = tiny_model([helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, "n"]),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1 << 18])],
                      [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [1, "m"])],
                      [helper.make_node("Concat", ["s", "x"], ["s_out"], axis=1)])
    save_model(grow, os.path.join(d, "grow.onnx"))
    with open(os.path.join(d, "grow.yaml"), "w") as f:
        f.write("nodes:\n  - name: kv\n    model: grow.onnx\n    inputs:\n"
                "      - {name: s, dtype: float32, shape: [1, n]}\n"
                "      - {name: x, dtype: float32, shape: [1, 262144]}\n    outputs:\n"
                "      - {name: s_out, dtype: float32, shape: [1, m]}\n"
                "inputs:\n  - {name: x, to: kv.x}\noutputs:\n  - {name: s, from: kv.s_out}\n"
                "feedback:\n  - from: kv.s_out\n    to: kv.s\n"
                "    initial: {zeros: true, dtype: float32, shape: [1, 1]}\n")
    cases.append(Case("fleet pipeline growing feedback", ["pipeline",
                      os.path.join(d, "grow.yaml"), "--steps", "100", "--max-run-bytes",
                      "140MiB"], None, check=mentions("feedback state"), max_rss_mb=900))
    # Doubling every step: the allocation fails under the data limit long before the (raised)
    # limit says no: exit 3 in words, never SIGABRT.
    double = tiny_model([helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, "n"])],
                        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [1, "m"])],
                        [helper.make_node("Concat", ["s", "s"], ["s_out"], axis=1)])
    save_model(double, os.path.join(d, "double.onnx"))
    cases.append(Case("fleet feedback doubling past memory", ["compare",
                      os.path.join(d, "double.onnx"), os.path.join(d, "double.onnx"),
                      "--feedback", "s_out=s", "--steps", "64", "--max-run-bytes", "1TiB"],
                      None, max_rss_mb=3200))

    # 5. Parser errors are exit 2 or 3 naming the file, never exit 4.
    with open(os.path.join(d, "m_ok.onnx"), "wb") as f:
        f.write(open(model, "rb").read())
    complex_keys = {
        "entry": "models:\n  - {? [a] : b, source: m_ok.onnx}\n",
        "top": "? [a]\n: b\nmodels: []\n",
        "defaults": "defaults:\n  ? [a]\n  : b\nmodels:\n  - {source: m_ok.onnx}\n",
        "inputs": "models:\n  - source: m_ok.onnx\n    inputs: {? [a] : b}\n",
        "params": "models:\n  - source: m_ok.onnx\n    to: fp16\n    params: {? [a] : b}\n",
        "dims": "models:\n  - source: m_ok.onnx\n    inputs: {dims: {? [a] : 2}}\n",
        "policy": "models:\n  - source: m_ok.onnx\n    policy: {atol: {? [a] : 1}}\n",
    }
    for tag, text in complex_keys.items():
        path = os.path.join(d, f"complex_key_{tag}.yaml")
        with open(path, "w") as f:
            f.write(text)
        cases.append(Case(f"fleet manifest complex key {tag}", ["batch", path, "--out",
                          os.path.join(d, f"out_ck_{tag}")], os.path.basename(path),
                          allowed={2}))
    path = os.path.join(d, "huge_number.json")
    with open(path, "w") as f:
        f.write('[{"model_id": "org/m", "file_path": "m_ok.onnx", "revision": 1e999}]\n')
    cases.append(Case("fleet manifest 1e999", ["batch", path, "--out",
                      os.path.join(d, "out_1e999")], "huge_number.json", allowed={2}))
    loop = os.path.join(d, "loop_link.onnx")
    os.symlink(loop, loop)
    path = os.path.join(d, "paths.txt")
    with open(path, "w") as f:
        f.write(loop + "\n" + "/" + "a" * 5000 + ".onnx\n" + ("x/" * 2100) + "m.onnx\n")
    cases.append(Case("fleet text list symlink loop and PATH_MAX", ["batch", path, "--out",
                      os.path.join(d, "out_paths")], None,
                      check=valid_json(os.path.join(d, "out_paths", "summary.json"))))
    # Invalid UTF-8: --id, a manifest's model_id and name, --out; then history --json.
    bad = b"\xff\xfe".decode("utf-8", "surrogateescape")
    store = os.path.join(d, "utf8_store.db")
    cases.append(Case("fleet invalid utf-8 --id", ["run", model, "--store", store, "--id",
                      "id" + bad], None, may_pass=True,
                      then=Case("fleet invalid utf-8 history --json", ["history", "--store",
                                store, "--json"], None, may_pass=True,
                                check=valid_json(stdout=True))))
    manifest = os.path.join(d, f"fleet{bad}.yaml").encode("utf-8", "surrogateescape")
    with open(manifest, "wb") as f:
        f.write(b"models:\n  - {source: m_ok.onnx, model_id: \"org/m\xff\"}\n")
    out = os.path.join(d, f"out{bad}")
    cases.append(Case("fleet invalid utf-8 manifest", ["batch", manifest.decode(
        "utf-8", "surrogateescape"), "--out", out, "-j", "1"], None, may_pass=True,
        check=valid_json(os.path.join(out, "summary.json")),
        then=Case("fleet invalid utf-8 batch history --json", ["history", "--store",
                  os.path.join(out, "convgate.db"), "--json"], None, may_pass=True,
                  check=valid_json(stdout=True))))
    # The output's name is in the node (field 2, tag 0x12) and in the graph's output ValueInfo
    # (field 1, tag 0x0a): both become the byte 0xff, which protobuf's Python API refuses to write.
    raw = (identity_model().SerializeToString().replace(b"\x12\x01y", b"\x12\x01\xff")
           .replace(b"\n\x01y", b"\n\x01\xff"))
    with open(os.path.join(d, "utf8_out.onnx"), "wb") as f:
        f.write(raw)
    cases.append(Case("fleet safetensors invalid utf-8 name", ["run",
                      os.path.join(d, "utf8_out.onnx"), "--save-outputs",
                      os.path.join(d, "utf8_out.safetensors")], "utf8_out.safetensors"))

    # 4. What the batch preflight and the hub read: FIFOs, devices, a huge sparse file.
    fifo = os.path.join(d, "fifo_policy.yaml")
    os.mkfifo(fifo)
    sparse = os.path.join(d, "sparse_40g.npz")
    with open(sparse, "wb") as f:
        f.truncate(40 << 30)
    fifo_model = os.path.join(d, "fifo_model.onnx")
    os.mkfifo(fifo_model)
    for tag, entry in (("fifo policy", "{source: m_ok.onnx, target: m_ok.onnx, policy: fifo_policy.yaml}"),
                       ("fifo source", "{source: fifo_model.onnx}"),
                       ("fifo target", "{source: m_ok.onnx, target: fifo_model.onnx}"),
                       ("dev zero inputs", "{source: m_ok.onnx, inputs: {load: /dev/zero}}"),
                       ("sparse 40 GiB inputs", "{source: m_ok.onnx, inputs: {load: sparse_40g.npz}}")):
        name = tag.replace(" ", "_")
        path = os.path.join(d, f"special_{name}.yaml")
        with open(path, "w") as f:
            f.write(f"models:\n  - {entry}\n")
        cases.append(Case(f"fleet batch preflight {tag}", ["batch", path, "--out",
                          os.path.join(d, f"out_{name}"), "--timeout", "20"], None, timeout=30,
                          check=valid_json(os.path.join(d, f"out_{name}", "summary.json"))))
    token_fifo = os.path.join(d, "token_fifo")
    os.mkfifo(token_fifo)
    hub_cache = os.path.join(d, "hub_cache")
    refs = os.path.join(hub_cache, "models--org--m", "refs")
    os.makedirs(refs)
    os.mkfifo(os.path.join(refs, "main"))
    os.symlink("/dev/zero", os.path.join(refs, "zero"))
    for tag, env, args in (
            ("HF_TOKEN_PATH /dev/zero", {"HF_TOKEN_PATH": "/dev/zero"}, []),
            ("HF_TOKEN_PATH FIFO", {"HF_TOKEN_PATH": token_fifo}, []),
            ("HF_HOME token /dev/zero", {"HF_HOME": os.path.join(d, "hf_home")}, []),
            ("refs FIFO", {}, []),
            ("refs /dev/zero", {}, ["--revision", "zero"])):
        if tag.startswith("HF_HOME"):
            os.makedirs(os.path.join(d, "hf_home"), exist_ok=True)
            if not os.path.lexists(os.path.join(d, "hf_home", "token")):
                os.symlink("/dev/zero", os.path.join(d, "hf_home", "token"))
        full_env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": hub_cache}
        full_env.update(env)
        cases.append(Case(f"fleet hub {tag}", ["fetch", "org/m", "model.onnx"] + args, None,
                          env=full_env, timeout=20, max_rss_mb=300))

    # 6, 7, 10. A hostile hub on 127.0.0.1 (tests/fixtures/fake_hub.py): a body trickled one byte
    # at a time, terminal escapes and a 40 MB line in its headers; links planted in its cache.
    repos = os.path.join(d, "repos")
    for name in ("slow", "esc", "huge", "m"):
        os.makedirs(os.path.join(repos, "org", name))
        with open(os.path.join(repos, "org", name, "model.onnx"), "wb") as f:
            f.write(open(model, "rb").read())
    hub = start_fake_hub(repos, ["trickle:/cdn/org/slow/:1000:0.2", "escheader:/org/esc/:1000",
                                 "hugeheader:/org/huge/:1000"])
    if hub is not None:
        endpoint = f"http://127.0.0.1:{hub}"

        def hub_env(cache):
            return {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": os.path.join(d, cache),
                    "HF_TOKEN": "", "CONVGATE_HUB_ATTEMPTS": "1",
                    "CONVGATE_HUB_STALL_TIMEOUT": "2"}
        no_esc = lambda code, out, err: (["ESC reaches the terminal"] if b"\x1b" in out + err
                                         else [])
        cases.append(Case("fleet hub trickle", ["fetch", "org/slow", "model.onnx"], None,
                          env=hub_env("cache_slow"), timeout=20, check=mentions("bytes a second")))
        # A hub slow enough to take minutes yet never stalled long enough for the stall timer:
        # the overall deadline (fetch --timeout; a batch entry's timeout for its preflight) ends it.
        slow_env = dict(hub_env("cache_deadline"), CONVGATE_HUB_STALL_TIMEOUT="60")
        cases.append(Case("fleet hub overall deadline", ["fetch", "org/slow", "model.onnx",
                                                         "--timeout", "1s"], None,
                          env=slow_env, timeout=20, check=mentions("deadline")))
        deadline_manifest = os.path.join(d, "deadline.yaml")
        with open(deadline_manifest, "w") as f:
            f.write("models:\n  - {id: slow, source: hf://org/slow/model.onnx, timeout: 1s}\n")
        cases.append(Case("fleet batch entry timeout covers its fetch",
                          ["batch", deadline_manifest, "--out", os.path.join(d, "out_deadline")],
                          None, env=dict(hub_env("cache_deadline_batch"),
                                         CONVGATE_HUB_STALL_TIMEOUT="60"),
                          timeout=30, check=mentions("deadline")))
        cases.append(Case("fleet hub escape header", ["fetch", "org/esc", "model.onnx"], None,
                          env=hub_env("cache_esc"), timeout=20, check=no_esc))
        cases.append(Case("fleet hub 40 MB header", ["fetch", "org/huge", "model.onnx"], None,
                          env=hub_env("cache_huge"), timeout=20, check=all_checks(
                              no_esc, lambda code, out, err: (
                                  ["curl's 'Out of memory' shown as it is"]
                                  if b"Out of memory" in err else []))))
        cases.append(Case("fleet hub revision ./", ["fetch", "org/m", "model.onnx", "--revision",
                                                    "./"], None, env=hub_env("cache_rev"),
                          allowed={2}))
        # Links planted in the shared cache: nothing is written through them.
        sha = __import__("hashlib").sha256(open(model, "rb").read()).hexdigest()
        victim = os.path.join(d, "victim.txt")
        with open(victim, "w") as f:
            f.write("victim\n")
        cache = os.path.join(d, "cache_planted")
        os.makedirs(os.path.join(cache, "models--org--m", "blobs"))
        os.symlink(victim, os.path.join(cache, "models--org--m", "blobs", sha + ".incomplete"))
        unchanged = lambda code, out, err: ([] if open(victim).read() == "victim\n"
                                            else ["the victim file was written through a link"])
        cases.append(Case("fleet hub planted .incomplete link", ["fetch", "org/m", "model.onnx"],
                          None, env=hub_env("cache_planted"), may_pass=True, check=unchanged))
        lock_cache = os.path.join(d, "cache_lock")
        os.makedirs(os.path.join(lock_cache, ".locks", "models--org--m"))
        created = os.path.join(d, "created_by_lock")
        os.symlink(created, os.path.join(lock_cache, ".locks", "models--org--m", sha + ".lock"))
        cases.append(Case("fleet hub planted .lock link", ["fetch", "org/m", "model.onnx"], None,
                          env=hub_env("cache_lock"), may_pass=True,
                          check=lambda code, out, err: (
                              ["a file was created through the .lock link"]
                              if os.path.lexists(created) else [])))
    # A planted OUT/<id> link in a batch's output folder.
    victim_dir = os.path.join(d, "victim_dir")
    os.makedirs(victim_dir)
    with open(os.path.join(victim_dir, "report.json"), "w") as f:
        f.write("{}\n")
    out = os.path.join(d, "out_planted")
    os.makedirs(out)
    os.symlink(victim_dir, os.path.join(out, "a"))
    path = os.path.join(d, "planted.yaml")
    with open(path, "w") as f:
        f.write("models:\n  - {id: a, source: m_ok.onnx}\n")
    cases.append(Case("fleet batch planted OUT/id link", ["batch", path, "--out", out], None,
                      check=lambda code, out_, err: (
                          [] if open(os.path.join(victim_dir, "report.json")).read() == "{}\n"
                          else ["the job wrote through OUT/a -> victim_dir"])))

    # 8. Linear time: 100k zero-size tensors; a pipeline spec with 80k outputs.
    header = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
              for i in range(100000)}
    text = json.dumps(header).encode()
    with open(os.path.join(d, "zero_100k.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
    cases.append(Case("fleet inspect 100k zero-size tensors", ["inspect",
                      os.path.join(d, "zero_100k.safetensors")], None, may_pass=True,
                      timeout=10))
    with open(os.path.join(d, "outputs_80k.yaml"), "w") as f:
        f.write("nodes:\n  - name: a\n    model: loop.onnx\ninputs:\n  - {name: x, to: a.x}\n"
                "outputs:\n")
        for i in range(80000):
            f.write(f"  - {{name: y{i}, from: a.y}}\n")
    cases.append(Case("fleet pipeline spec 80k outputs", ["pipeline",
                      os.path.join(d, "outputs_80k.yaml"), "--describe"], None, may_pass=True,
                      timeout=10))
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
    elif code not in case.allowed and not (code == 0 and case.may_pass):
        problems.append(f"exit {code}")
    if code in case.allowed and code != 0 and case.about and case.about not in text and code != 1:
        problems.append(f"the message does not name {case.about}")
    if case.check and not hung:
        problems += case.check(code, out, err)
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
    parser.add_argument("--only", help="run only the cases whose name matches this regex")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    CONVGATE = os.path.join(build, "src", "cli", "convgate")
    work = args.keep or tempfile.mkdtemp(prefix="convgate_hostile_")
    os.makedirs(work, exist_ok=True)
    rng = random.Random(args.seed)
    cases = build_cases(work, build, args.quick, rng) + fleet_cases(work, build)
    if args.only:
        cases = [case for case in cases if re.search(args.only, case.name)]

    def one(case):
        results = []
        while case is not None:
            results.append((case,) + run_case(case, work))
            case = case.then
        return results

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = [r for chain in pool.map(one, cases) for r in chain]
    cases = [r[0] for r in results]
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
        if rss_mb > case.max_rss_mb:
            problems.append(f"peak RSS {rss_mb:.0f} MiB over {case.max_rss_mb} MiB")
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
    for hub in HUBS:
        hub.kill()
    if not args.keep and not violations:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
