// Whole-file reads, atomic writes and content hashes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/core/status.h"

namespace convgate {

// Reads the whole file. Errors name the path and strerror.
Result<std::string> ReadFile(const std::filesystem::path& path);

// Writes to "<path>.tmp-<pid>" in the same directory, fsyncs, then renames over `path`, so a crash
// or a full disk never leaves a half-written result file where a complete one was expected.
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view contents);

// fsyncs a file written by someone else (libzip, a converter, a copy) before it is renamed into
// place, so a crash cannot publish it half-written. Unavailable naming the path and strerror.
Status SyncFile(const std::filesystem::path& path);

// Lower-case hex sha256 of a file's contents, streamed (constant memory).
Result<std::string> Sha256File(const std::filesystem::path& path);
// Lower-case hex sha256 of bytes.
std::string Sha256Hex(std::string_view bytes);

}  // namespace convgate
