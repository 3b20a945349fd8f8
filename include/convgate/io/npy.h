// NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading accepts little- and big-endian data (converted to native little-endian), Fortran order
// (converted to C order), and every dtype in convgate::DType: '<f4' '<f8' '<f2' '|i1' '<i2' '<i4'
// '<i8' '|u1' '<u2' '<u4' '<u8' '|b1'. numpy has no bfloat16; an ml_dtypes bfloat16 array saved
// with np.save gets the descr '<V2' (2-byte void), so convgate writes bfloat16 as '<V2' and reads
// '<V2' / '|V2' as bfloat16: numpy loads such a file, and arr.view(ml_dtypes.bfloat16) restores it.
// ('>V2' reads the same: a void has no byte order, numpy keeps its bytes as they are.) Bool bytes
// other than 0 read as 1.
//
// Strings: numpy str arrays ('<U<n>', '>U<n>', '=U<n>': n UTF-32 code points per element) read as
// DType::kString in UTF-8, and bytes arrays ('|S<n>') as kString with the bytes as they are; as in
// numpy, trailing NULs of each element are dropped (so a string ending in NUL does not round-trip,
// in numpy either). String tensors are written as '<U<n>' with n the longest element in code
// points (at least 1, as numpy does), so np.load gives a str array; an element that is not valid
// UTF-8 cannot be written (InvalidArgument naming the element). A code point that is a surrogate
// or above U+10FFFF, or a width of 0, is DataLoss.
//
// Unimplemented: object arrays, structured dtypes, complex numbers, datetimes, long double, and
// format versions other than 1.0/2.0/3.0.
//
// DataLoss, with `what` named and the problem stated: bad magic, a truncated header, a header that
// is not a dict with exactly the keys descr / fortran_order / shape (numpy requires the same), a
// descr that is not a dtype, negative or overflowing dimensions, and data shorter or longer than
// the shape needs. numpy ignores bytes after the data; convgate reports them, because they mean
// the header and the writer disagree about the array and a checker should not guess which is right.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "convgate/core/limits.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

// `what` names the source in error messages ("a.npz entry 'x.npy'", "/tmp/x.npy").
Result<Tensor> ParseNpy(std::string_view bytes, std::string_view what);
// Reads a regular file only (core/file_util.h InputFile: a FIFO or /dev/zero is
// FailedPrecondition naming it). An array whose data is larger than limits.max_tensor_bytes is
// FailedPrecondition naming the file, the array and the limit, found from the header before any
// data is read. The data is not read at all: the file is mapped and the tensor adopts its data
// where it lies (numpy aligns it to 64 bytes), except for Fortran order and strings, which are
// rearranged into buffers of their own.
Result<Tensor> ReadNpy(const std::filesystem::path& path, const Limits& limits = Limits());

// Version 1.0 header (2.0 when the header exceeds 65535 bytes), little-endian, C order. Fails only
// for string tensors: InvalidArgument for an element that is not UTF-8, Unavailable when the
// padded copy cannot be allocated.
Result<std::string> SerializeNpy(const Tensor& tensor);

// SerializeNpy in two parts, for writers that stream a numeric tensor's own bytes after the header
// instead of copying them (npz members). The data is tensor.bytes(), except for string tensors,
// whose .npy data (fixed-width UTF-32) is nothing the tensor holds: string_data carries it.
struct NpyParts {
  std::string header;       // magic, version, length, padded header dict
  std::string string_data;  // kString tensors only
};
Result<NpyParts> SerializeNpyParts(const Tensor& tensor);
// The header alone. REQUIRES: dtype != kString (a string header depends on the strings).
std::string SerializeNpyHeader(DType dtype, const Shape& shape);

// Atomic (see WriteFileAtomic). Errors as SerializeNpy, naming `path`.
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace convgate::io
