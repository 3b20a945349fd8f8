// Scratch files: written once, read back at once by the same process (a model a runtime loads
// from a path), inside a private folder (core/temp_dir.h).
#pragma once

#include <filesystem>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// Creates `path` holding the bytes of `starting_with` when given (copied by the kernel, never
// through this process's memory), then `contents`. Created with O_EXCL | O_NOFOLLOW and never
// synced: unlike WriteFileAtomic's results (file_util.h) it outlives nothing, and an fsync per
// file cost per-node validation one disk flush per model it wrote. Unavailable naming the paths
// and strerror.
Status WriteScratchFile(const std::filesystem::path& path, std::string_view contents,
                        const std::filesystem::path& starting_with = {});

// Creates `path` as a hard link to the file `to`: a runtime reads that file through a name inside
// a private folder (its external data must lie beside the model it loads), and nothing is copied.
// Unavailable naming both paths and strerror when the file system refuses: another file system
// (EXDEV), or fs.protected_hardlinks for a file the user neither owns nor may write.
Status LinkScratchFile(const std::filesystem::path& path, const std::filesystem::path& to);

}  // namespace convgate
