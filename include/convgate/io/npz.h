// NumPy .npz archives: a zip of .npy members, stored (np.savez) or deflated (np.savez_compressed),
// read through libzip. Member "x.npy" becomes tensor "x"; names keep any '/' and ':' they contain.
#pragma once

#include <filesystem>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

// Tensors in archive order. A member that is not a valid .npy fails the whole read with DataLoss
// naming the archive and the member. A file that is not a zip archive is DataLoss too.
Result<TensorMap> ReadNpz(const std::filesystem::path& path);

struct NpzWriteOptions {
  // np.savez stores members uncompressed; keep that default so numpy-side reads are as fast as ours.
  bool compress = false;
};

// Writes atomically: to a temporary file beside `path`, then renamed over it.
Status WriteNpz(const std::filesystem::path& path, const TensorMap& tensors,
                const NpzWriteOptions& options = {});

}  // namespace convgate::io
