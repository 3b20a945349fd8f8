#!/usr/bin/python3
"""numpy side of convgate's .npy/.npz interop tests (tests/io/numpy_interop_test.cc).

Run with Debian's /usr/bin/python3, which has python3-numpy.

  numpy_interop.py write DIR   writes .npy/.npz files with numpy into DIR, plus
                               DIR/expected.tsv: one line per array, "file<TAB>key<TAB>dtype<TAB>
                               dims<TAB>hex", where hex is the array's little-endian C-order bytes
                               (for str and bytes arrays: each element's UTF-8 or bytes, as numpy
                               returns them, in hex, joined by ",") and key is the npz member name
                               ("" for .npy files); and
                               DIR/unsupported.tsv: "file<TAB>status code" for arrays convgate
                               must refuse.
  numpy_interop.py read FILE...  loads each file with numpy and prints lines in the same format.

dtype names are convgate's DTypeName spellings; a 2-byte void ('V2') is bfloat16 (see npy.h),
and str ('U') and bytes ('S') arrays are "string".
"""

import os
import sys

import numpy as np

# Values that exercise signs, zero, extremes and (for floats) -0, inf and nan.
FLOAT_VALUES = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 65504.0, 1e-3, -7.0, 3.0e-5, 42.0]
INT_DTYPES = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"]


def dtype_name(dtype):
    if dtype.kind == "V" and dtype.itemsize == 2:
        return "bfloat16"
    if dtype.kind in "US":
        return "string"
    return dtype.newbyteorder("=").name


def element_hex(element):
    return (element.encode("utf-8") if isinstance(element, str) else element).hex()


def describe(arr):
    dims = ",".join(str(d) for d in arr.shape)
    if arr.dtype.kind in "US":
        # Elements as numpy hands them out (trailing NULs stripped), in C order.
        data = ",".join(element_hex(e) for e in arr.ravel(order="C").tolist())
        return "%s\t%s\t%s" % (dtype_name(arr.dtype), dims, data)
    little = arr.astype(arr.dtype.newbyteorder("<")) if arr.dtype.kind != "V" else arr
    data = np.ascontiguousarray(little).tobytes(order="C").hex()
    return "%s\t%s\t%s" % (dtype_name(arr.dtype), dims, data)


def int_values(code, count):
    info = np.iinfo(np.dtype(code))
    base = [0, 1, -1, info.min, info.max, 7, -100, 100, 12345, -12345, 2**31 - 1, -(2**31)]
    return np.array([min(max(v, info.min), info.max) for v in base[:count]], dtype=code)


def arrays():
    """(file name, array) pairs written with np.save."""
    out = []
    for order in "<>":
        for code in ["f2", "f4", "f8"]:
            arr = np.array(FLOAT_VALUES, dtype=order + code).reshape(3, 4)
            out.append(("%s_%s.npy" % ("le" if order == "<" else "be", code), arr))
        for code in INT_DTYPES:
            arr = int_values(code, 12).astype(np.dtype(code).newbyteorder(order)).reshape(2, 6)
            out.append(("%s_%s.npy" % ("le" if order == "<" else "be", code), arr))
    out.append(("bool.npy", np.array([True, False, False, True, True, False]).reshape(3, 2)))
    bf16_bits = np.array([0x0000, 0x8000, 0x3F80, 0xC000, 0x7F80, 0x7FC0], dtype="<u2")
    out.append(("bfloat16.npy", np.frombuffer(bf16_bits.tobytes(), dtype="V2").reshape(2, 3)))
    cube = np.arange(24, dtype="<f4").reshape(2, 3, 4)
    out.append(("fortran_f4.npy", np.asfortranarray(cube)))
    out.append(("fortran_be_i8.npy", np.asfortranarray(cube.astype(">i8"))))
    out.append(("fortran_2d_u1.npy", np.asfortranarray(np.arange(6, dtype="u1").reshape(2, 3))))
    out.append(("scalar_f8.npy", np.array(3.5, dtype="<f8")))
    out.append(("scalar_be_i4.npy", np.array(-9, dtype=">i4")))
    out.append(("rank1.npy", np.array([1, 2, 3], dtype="<i8")))
    out.append(("empty_1d.npy", np.zeros((0,), dtype="<f4")))
    out.append(("empty_3d.npy", np.zeros((2, 0, 3), dtype="<i2")))
    words = np.array(["monday", "K\u00f6ln", "", "\U0001F600", "a\x00b", "tab\there"])
    words = words.reshape(2, 3)
    out.append(("unicode.npy", words))
    out.append(("unicode_be.npy", words.astype(">U9")))
    out.append(("unicode_fortran.npy", np.asfortranarray(words)))
    out.append(("unicode_scalar.npy", np.array("x")))
    out.append(("unicode_empty.npy", np.array([], dtype=str)))
    out.append(("bytes.npy", np.array([b"abc", b"", b"a\x00b", b"\xff\xfe"])))
    return out


def write(directory):
    expected = []
    for name, arr in arrays():
        np.save(os.path.join(directory, name), arr)
        expected.append("%s\t\t%s" % (name, describe(arr)))
    # Header versions 2.0 and 3.0 (np.save picks them only for huge or non-latin1 headers).
    for version in [(2, 0), (3, 0)]:
        arr = np.arange(6, dtype="<f4").reshape(2, 3)
        name = "version%d.npy" % version[0]
        with open(os.path.join(directory, name), "wb") as f:
            np.lib.format.write_array(f, arr, version=version)
        expected.append("%s\t\t%s" % (name, describe(arr)))
    members = {
        "x": np.arange(4, dtype="<f4"),
        "scope/a/b": np.array([[1, 2], [3, 4]], dtype=">i4"),
        "out:0": np.array(True),
        "empty": np.zeros((0, 2), dtype="<u2"),
        "f16": np.array(FLOAT_VALUES, dtype="<f2"),
        "words": np.array(["monday", "MONDAY", "K\u00f6ln"]),
    }
    for name, save in [("stored.npz", np.savez), ("deflated.npz", np.savez_compressed)]:
        save(os.path.join(directory, name), **members)
        for key, arr in members.items():
            expected.append("%s\t%s\t%s" % (name, key, describe(arr)))
    np.savez(os.path.join(directory, "no_arrays.npz"))
    with open(os.path.join(directory, "expected.tsv"), "w") as f:
        f.write("\n".join(expected) + "\n")

    unsupported = [
        ("complex.npy", np.array([1 + 2j], dtype="<c8")),
        ("structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")])),
        ("object.npy", np.array([{"a": 1}, None], dtype=object)),
        ("datetime.npy", np.array(["2020-01-01"], dtype="datetime64[D]")),
    ]
    lines = []
    for name, arr in unsupported:
        np.save(os.path.join(directory, name), arr, allow_pickle=True)
        lines.append("%s\tUnimplemented" % name)
    with open(os.path.join(directory, "unsupported.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


def read(paths):
    for path in paths:
        if path.endswith(".npz"):
            with np.load(path) as archive:
                for key in archive.files:
                    print("%s\t%s\t%s" % (path, key, describe(archive[key])))
        else:
            print("%s\t\t%s" % (path, describe(np.load(path))))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "read":
        read(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
