// What the driver does with files: checking a converter's output, work directories outside the
// cache, atomic copies, and the cache record of a result (internal to src/convert).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convert/converter.h"
#include "convgate/convert/cache.h"
#include "convgate/convert/convert.h"
#include "convgate/core/temp_dir.h"

namespace convgate::convert {

// `attempt` unchanged when `out` holds a valid result of `layout`: kNoOutput when it is missing or
// empty (an IR without its .bin, a folder without files), kInvalidOutput when an .onnx output does
// not parse or fails ONNX's checker. Neither is transient: a converter that wrote garbage once
// writes it again.
AttemptResult CheckOutput(const std::filesystem::path& out, OutputLayout layout,
                          AttemptResult attempt);

// The weights of the OpenVINO IR `xml`: the same name with the extension .bin.
std::filesystem::path IrWeightsPath(const std::filesystem::path& xml);

// The output's sha256: of the file; for an IR (.xml with its .bin beside it) and for a folder, of
// a listing of its files' names and sha256s (key.h's DigestSource), so that every byte counts.
Result<std::string> DigestOutput(const std::filesystem::path& out);
// Bytes of the file, of the IR's two files, or of every file in the folder.
int64_t OutputBytes(const std::filesystem::path& out);

// A fresh private directory under the system temp dir (conversions without the cache), removed
// when the TempDir goes away.
Result<TempDir> MakeTempWorkDir();
// Removes a work directory and everything in it, ignoring errors (it is private and temporary).
void RemoveWorkDir(const std::filesystem::path& dir);

// Copies `from` into a PendingFile beside `to` (never a file or symlink someone planted there),
// flushes it, then renames it over `to`, creating `to`'s parent directories: `to` is either its
// old self or the complete copy, never a partial file.
Status CopyFileAtomic(const std::filesystem::path& from, const std::filesystem::path& to);

// Copies the model `from` to `to` as CopyFileAtomic does, and its external data file
// (ExternalDataPath) when it has one: to ExternalDataPath(`to`), written first so that `to` never
// names a data file that is not there yet, with the model's locations renamed to match. An IR's
// .bin is copied (first) to IrWeightsPath(`to`). A folder is copied into a temporary folder beside
// `to`, which then replaces `to` by renames (an older `to` is removed after).
Status CopyModelAtomic(const std::filesystem::path& from, const std::filesystem::path& to);

// The cache's record of a finished conversion whose output is `out`.
CachedConversion ToCached(const ConversionRecord& record, const std::filesystem::path& out,
                          const std::vector<std::string>& notes);

}  // namespace convgate::convert
