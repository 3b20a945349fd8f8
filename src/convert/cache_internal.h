// Helpers shared by the cache's files (internal to src/convert).
#pragma once

#include <filesystem>
#include <string>

#include "convgate/convert/cache.h"
#include "convgate/core/status.h"

namespace convgate::convert {

inline constexpr char kRecordFile[] = "record.json";
inline constexpr char kWorkDirName[] = ".tmp";

// record.json's text and back. ReadRecord: DataLoss naming the file when it is not a record.
std::string RecordToJson(const CachedConversion& record);
Result<CachedConversion> ReadRecord(const std::filesystem::path& entry_dir);

// Seconds since the epoch of a file's modification time; 0 when it cannot be read.
int64_t ModifiedUnix(const std::filesystem::path& path);
int64_t NowUnix();

// Work directory names are "<prefix>.<host>.<pid>.<n>", so a prune on the same host can tell
// which belong to processes that are gone.
std::string WorkDirName(const std::string& prefix);
// True when `name` is a work directory of a process of this host that no longer exists.
bool IsStaleWorkDir(const std::string& name);

}  // namespace convgate::convert
