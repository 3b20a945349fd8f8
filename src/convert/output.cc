#include "convert/output.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "convert/cache_internal.h"
#include "convgate/core/file_util.h"

namespace convgate::convert {
namespace {}  // namespace

AttemptResult CheckOutput(const std::filesystem::path& out, AttemptResult attempt) {
  std::error_code error;
  const bool exists = std::filesystem::is_regular_file(out, error);
  const auto size = exists ? std::filesystem::file_size(out, error) : 0;
  if (!exists || size == 0) {
    attempt.error = ConversionError::kNoOutput;
    attempt.problem = exists ? "it reported success but wrote an empty file"
                             : "it reported success but wrote nothing at " + out.string();
    return attempt;
  }
  if (out.extension() == ".onnx") {
    Status valid = CheckOnnxModelFile(out);
    if (!valid.ok()) {
      attempt.error = ConversionError::kInvalidOutput;
      attempt.problem = "it wrote a file that is not a valid ONNX model: " + valid.message();
    }
  }
  return attempt;
}

Result<TempDir> MakeTempWorkDir() { return TempDir::Create("convert"); }

void RemoveWorkDir(const std::filesystem::path& dir) {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

Status CopyFileAtomic(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code error;
  if (to.has_parent_path()) std::filesystem::create_directories(to.parent_path(), error);
  if (error) {
    return Status::Unavailable("cannot create " + to.parent_path().string() + ": " +
                               error.message());
  }
  const std::filesystem::path tmp = to.string() + ".tmp-" + std::to_string(::getpid());
  std::filesystem::copy_file(from, tmp, std::filesystem::copy_options::overwrite_existing, error);
  Status status = error ? Status::Unavailable("cannot copy " + from.string() + " to " +
                                              tmp.string() + ": " + error.message())
                        : SyncFile(tmp);
  if (status.ok() && ::rename(tmp.c_str(), to.c_str()) != 0) {
    status = Status::Unavailable("cannot write " + to.string() + ": " + std::strerror(errno));
  }
  if (!status.ok()) std::filesystem::remove(tmp, error);
  return status;
}

CachedConversion ToCached(const ConversionRecord& record, const std::filesystem::path& out,
                          const std::vector<std::string>& notes) {
  CachedConversion cached;
  cached.key = record.cache_key;
  cached.kind = record.kind;
  cached.tool = record.tool;
  cached.tool_version = record.tool_version;
  cached.converter = record.converter;
  cached.params = record.params;
  cached.source_path = record.source_path;
  cached.source_sha256 = record.source_sha256;
  cached.model_file = out.filename().string();
  cached.model_sha256 = record.output_sha256;
  cached.model_bytes = record.output_bytes;
  cached.created_unix = NowUnix();
  cached.notes = notes;
  return cached;
}

}  // namespace convgate::convert
