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
// Unimplemented: object arrays, strings, structured dtypes, complex numbers, datetimes, long
// double, and format versions other than 1.0/2.0/3.0.
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

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

// `what` names the source in error messages ("a.npz entry 'x.npy'", "/tmp/x.npy").
Result<Tensor> ParseNpy(std::string_view bytes, std::string_view what);
Result<Tensor> ReadNpy(const std::filesystem::path& path);

// Version 1.0 header (2.0 when the header exceeds 65535 bytes), little-endian, C order.
std::string SerializeNpy(const Tensor& tensor);
// The part of SerializeNpy before the data (magic, version, length, padded header dict), for
// writers that stream the tensor's bytes after it instead of copying them (npz members).
std::string SerializeNpyHeader(DType dtype, const Shape& shape);
// Atomic (see WriteFileAtomic).
Status WriteNpy(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace convgate::io
