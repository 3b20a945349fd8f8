// safetensors files (https://github.com/huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}}, then the data buffer the offsets index.
//
// dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL (bool bytes other than 0 read as 1,
// as in the npy reader). The 8-bit and smaller float types (F8_E4M3, F8_E5M2, F6_*, F4) are
// Unimplemented, naming the tensor.
//
// DataLoss, naming `what` and the tensor, for everything the format's own rules forbid (the
// safetensors library refuses the same): a file shorter than its header, a header over 100 MB
// (the library's limit) or not a JSON object starting with '{', an entry without exactly dtype /
// shape / data_offsets, a negative or overflowing dimension, offsets that are not [begin <= end],
// a byte range that does not match dtype x shape, and a data buffer that the tensors do not cover
// exactly: every byte belongs to one tensor, in order, without holes, overlaps or trailing bytes.
// A tensor larger than limits.max_tensor_bytes is FailedPrecondition naming the file, the tensor
// and the limit, found from the header before any data is copied.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "convgate/core/limits.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

struct SafetensorsFile {
  TensorMap tensors;                            // in the order of their data in the file
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// `what` names the source in error messages ("/tmp/model.safetensors").
Result<SafetensorsFile> ParseSafetensors(std::string_view bytes, std::string_view what,
                                         const Limits& limits = Limits());
// A regular file only (core/file_util.h InputFile), mapped rather than read.
Result<SafetensorsFile> ReadSafetensors(const std::filesystem::path& path,
                                        const Limits& limits = Limits());

// The file safetensors' save_file writes for these tensors (header padded with spaces to a
// multiple of 8, tensors in map order). InvalidArgument for a string tensor (safetensors has no
// string type).
Result<std::string> SerializeSafetensors(const TensorMap& tensors,
                                         const std::map<std::string, std::string>& metadata = {});
// SerializeSafetensors written atomically (core/file_util.h WriteFileAtomic): on any failure the
// previous file, if any, is left as it was. Errors name the file.
Status WriteSafetensors(const std::filesystem::path& path, const TensorMap& tensors,
                        const std::map<std::string, std::string>& metadata = {});

}  // namespace convgate::io
