// Reading an .npy from any byte stream (a file, a zip member being inflated, bytes in memory) so
// that the data goes straight into the tensor's buffer, after the header's sizes are checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io::internal {

// numpy refuses headers over 10000 bytes unless told otherwise (np.load's max_header_size);
// convgate reads up to 1 MiB (the version 2.0 header of a 22000-dim shape takes 66 KB), so a
// forged header length cannot make it allocate gigabytes.
inline constexpr size_t kMaxNpyHeaderBytes = size_t{1} << 20;

// Fills `dst` with the stream's next dst.size() bytes; an error (naming its source) when it
// cannot.
using NpyByteSource = std::function<Status(std::span<std::byte> dst)>;

// An .npy whose bytes are in memory that can outlive the read (a mapped file): numeric data in C
// order is then adopted where it lies instead of read into a buffer of its own. Its address need
// not suit the dtype (an .npz member starts wherever its zip header ends): Tensor::IsAligned tells
// readers of the data.
struct MappedNpy {
  std::span<std::byte> bytes;  // the whole .npy, header included: total_bytes of them
  std::shared_ptr<void> owner;
};

// Reads one .npy of `total_bytes` bytes from `source`: the header first, then the data. Before any
// data is read, the data the header declares must be at most `max_tensor_bytes`
// (FailedPrecondition naming `what`, the array and the limit) and exactly what `total_bytes`
// leaves after the header (DataLoss). Errors as ParseNpy otherwise. With `mapped`, `source` reads
// the same bytes (for the header) and numeric data is adopted from `mapped`.
Result<Tensor> ReadNpyFrom(const NpyByteSource& source, uint64_t total_bytes,
                           int64_t max_tensor_bytes, std::string_view what,
                           const MappedNpy* mapped = nullptr);

// ReadNpyFrom over an .npy already in memory (a mapped file or archive member), its numeric data
// adopted in place.
Result<Tensor> ReadMappedNpy(const MappedNpy& mapped, int64_t max_tensor_bytes,
                             std::string_view what);

}  // namespace convgate::io::internal
