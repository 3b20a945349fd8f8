#!/usr/bin/python3
"""Writes the fuzz seeds that numpy and Python's zipfile make, as users' files are made.

    /usr/bin/python3 fuzz/make_numpy_seeds.py fuzz/corpus

convgate's own writers make the rest (make_seeds.cc). Here: .npy files in the layouts numpy
writes and convgate reads (big-endian, Fortran order, bytes and str arrays, format 2.0, a void
bfloat16) or refuses (objects, structured, complex); .npz archives the way np.savez writes them
(Zip64 extra fields, deflate) and zips numpy never writes but users hand over (a folder entry, a
comment, data descriptors, a member that is not .npy). Everything is small and deterministic:
members get a fixed date, so rerunning changes no file.
"""

import io
import os
import sys
import warnings
import zipfile

import numpy as np

# np.savez stamps members with the current time; a fixed date keeps the seeds reproducible.
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


def npy_bytes(array, version=None, allow_pickle=False):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=version, allow_pickle=allow_pickle)
    return out.getvalue()


NPY_SEEDS = {
    "np_big_endian.npy": lambda: npy_bytes(np.arange(6, dtype=">f4").reshape(2, 3)),
    "np_fortran.npy": lambda: npy_bytes(np.asfortranarray(np.arange(6, dtype="<i8").reshape(2, 3))),
    "np_bytes.npy": lambda: npy_bytes(np.array([b"ab", b"c\x00", b"\xff"], dtype="S2")),
    "np_str.npy": lambda: npy_bytes(np.array(["héllo", "", "日本"], dtype="<U5")),
    "np_version2.npy": lambda: npy_bytes(np.arange(3, dtype="<u2"), version=(2, 0)),
    "np_bfloat16_void.npy": lambda: npy_bytes(np.array([0x3F80, 0xC000], dtype="<u2").view("V2")),
    "np_bool.npy": lambda: npy_bytes(np.array([[True, False]], dtype="|b1")),
    "np_scalar.npy": lambda: npy_bytes(np.float16(1.5)),
    "np_empty.npy": lambda: npy_bytes(np.zeros((0, 2), dtype="<f8")),
    "np_object.npy": lambda: npy_bytes(np.array([1, "a"], dtype=object), allow_pickle=True),
    "np_structured.npy": lambda: npy_bytes(np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")])),
    "np_complex.npy": lambda: npy_bytes(np.array([1 + 2j], dtype="<c8")),
}


def savez_bytes(arrays, compress=False):
    """What np.savez / np.savez_compressed write (numpy/lib/npyio.py _savez), dated FIXED_DATE."""
    out = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(out, "w", compression=method, allowZip64=True) as archive:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=FIXED_DATE)
            info.compress_type = method
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array))
    return out.getvalue()


class Unseekable(io.RawIOBase):
    """A stream zipfile cannot seek back in, so it writes data descriptors after each member."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, chunk):
        self.data += chunk
        return len(chunk)


def zip_bytes(members, comment=b"", streamed=False):
    """A zip of (name, bytes, compress) members, the way other zip tools lay them out."""
    raw = Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        for name, data, compress in members:
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            archive.writestr(info, data)
        archive.comment = comment
    return bytes(raw.data) if streamed else raw.getvalue()


def npz_seeds():
    x = np.arange(6, dtype="<f4").reshape(2, 3)
    ids = np.array([3, 1, 2], dtype="<i8")
    x_npy = npy_bytes(x)
    return {
        "np_savez.npz": savez_bytes({"x": x, "ids": ids}),
        "np_savez_compressed.npz": savez_bytes({"x": x, "ids": ids}, compress=True),
        "np_savez_arr_0.npz": savez_bytes({"arr_0": np.array(["a", "bc"]), "arr_1": ids}),
        "zip_folder_entry.npz": zip_bytes([("dir/", b"", False), ("dir/x.npy", x_npy, False)]),
        "zip_comment.npz": zip_bytes([("x.npy", x_npy, True)], comment=b"written by a tool"),
        "zip_data_descriptor.npz": zip_bytes(
            [("x.npy", x_npy, True), ("ids.npy", npy_bytes(ids), False)], streamed=True
        ),
        "near_not_npy_member.npz": zip_bytes([("x.npy", x_npy, False), ("notes.txt", b"hi", False)]),
        "near_duplicate.npz": zip_bytes([("x.npy", x_npy, False), ("x.npy", x_npy, False)]),
    }


def write(root, target, name, data):
    folder = os.path.join(root, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as out:
        out.write(data)


def main():
    # near_duplicate.npz repeats a member name on purpose.
    warnings.filterwarnings("ignore", "Duplicate name", UserWarning)
    if len(sys.argv) != 2:
        sys.exit("usage: make_numpy_seeds.py CORPUS_DIR (fuzz/corpus)")
    root = sys.argv[1]
    for name, make in NPY_SEEDS.items():
        write(root, "npy", name, make())
    for name, data in npz_seeds().items():
        write(root, "npz", name, data)
        write(root, "npz_directory", name, data)


if __name__ == "__main__":
    main()
