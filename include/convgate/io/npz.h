// NumPy .npz archives: a zip of .npy members, stored (np.savez) or deflated (np.savez_compressed),
// read through libzip. Member "x.npy" becomes tensor "x"; names keep any '/' and ':' they contain.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/limits.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

// Tensors in archive order. Every error names the archive (and the member, where there is one):
// - not a zip archive, an empty file, a damaged member (CRC, truncation) or a member that is not
//   a valid .npy: DataLoss;
// - a member whose name does not end in ".npy": DataLoss. numpy only writes .npy members and hands
//   anything else back as raw bytes, which convgate cannot compare, so such an archive was not
//   written by np.savez and is reported rather than half read. Directory entries ("dir/") are
//   skipped: zip tools add them and they hold no data;
// - two members with the same name: DataLoss;
// - encrypted members or compression methods libzip lacks: Unimplemented;
// - a member whose declared uncompressed size or .npy header holds a tensor over
//   limits.max_tensor_bytes, or members declaring more than limits.max_run_bytes in all:
//   FailedPrecondition naming the member (or archive) and the limit, before anything is inflated.
//   A zip bomb (5 GiB of zeros deflated into 5 MB) is refused by its headers, not by running out
//   of memory;
// - (ReadNpz) a path that is not a regular file, a FIFO or a device: FailedPrecondition (see
//   core/file_util.h InputFile).
// ReadNpz maps the file: a stored member (np.savez's default) is not read at all once its CRC is
// checked; its tensor adopts the member's numeric data where it lies in the mapping (not aligned
// for its dtype, in general: see Tensor::IsAligned). Compressed members are inflated straight into
// their tensors' buffers. Either way reading an archive takes the memory of its tensors and no
// more. ParseNpz reads an archive held in memory (for fuzzing and for archives received over a
// pipe), with `what` naming it in messages.
Result<TensorMap> ReadNpz(const std::filesystem::path& path, const Limits& limits = Limits());
Result<TensorMap> ParseNpz(std::string_view bytes, std::string_view what,
                           const Limits& limits = Limits());

// The uncompressed bytes the members of the archive at `path` declare in all (saturating at
// UINT64_MAX), read from its central directory alone: what reading it would take, known before
// anything is inflated (two saved-output archives are held at once; gate/compare_gate.cc).
// Errors as ReadNpz's for a file that is not a readable zip archive.
Result<uint64_t> NpzDeclaredBytes(const std::filesystem::path& path);

struct NpzWriteOptions {
  // np.savez stores members uncompressed; keep that default so numpy-side reads are as fast as
  // ours.
  bool compress = false;
  // Flushed to disk before it replaces the path; false for scratch files this process reads back
  // at once (a sample's inputs for a runner, outputs waiting for the other side), where a flush
  // per sample is pure cost.
  bool sync = true;
};

// Writes atomically: to a temporary file beside `path`, then renamed over it, so on any failure
// the previous file (if there was one) is left as it was. Members are written in map order with a
// fixed modification time, so the same tensors always give the same bytes (content-addressed caches
// depend on it). An empty map gives an empty zip archive, as np.savez() does.
Status WriteNpz(const std::filesystem::path& path, const TensorMap& tensors,
                const NpzWriteOptions& options = {});

// One member of an archive written from a file holding its whole .npy bytes.
struct NpzMemberFile {
  std::string name;  // without ".npy"
  std::filesystem::path file;
};
// WriteNpz for members already serialized to .npy files (a data set saved one sample at a time):
// each is read from its file while the archive is written, never all held at once. Stored, with
// the fixed mtime, written atomically as WriteNpz.
Status WriteNpzFromFiles(const std::filesystem::path& path,
                         const std::vector<NpzMemberFile>& members);

}  // namespace convgate::io
