// The sha256 of a file a user gave (a batch entry's inputs or policy): opened through InputFile
// (core/file_util.h), so a FIFO, a device or a huge sparse file is refused before a byte is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// Lower-case hex sha256 of a regular file of at most `max_bytes`; InputFile::Open's errors
// (FailedPrecondition naming the path for a FIFO, a device or a file over the limit, with
// `limit_name` in the parentheses).
Result<std::string> Sha256UserFile(const std::filesystem::path& path, uint64_t max_bytes,
                                   std::string_view limit_name);

}  // namespace convgate
