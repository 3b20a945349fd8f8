#include "convert/output.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "convert/cache_internal.h"
#include "convert/key.h"
#include "convgate/core/file_util.h"
#include "convgate/graph/internal/external_data.h"

namespace convgate::convert {
namespace {

// Copies everything from `source` (named `from`) into the pending file, in the kernel when it
// can (copy_file_range: no round trip through user space, reflinks where the file system has
// them).
Status CopyBytes(int source, const std::filesystem::path& from, PendingFile& to) {
  while (true) {
    const ssize_t n = ::copy_file_range(source, nullptr, to.fd(), nullptr, size_t{1} << 30, 0);
    if (n == 0) return Status::OK();
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
      return Status::Unavailable("cannot copy " + from.string() + " to " + to.path().string() +
                                 ": " + std::strerror(errno));
    }
    break;  // not supported between these files: copy through a buffer
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(source, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::Unavailable("cannot read " + from.string() + ": " + std::strerror(errno));
    }
    if (n == 0) return Status::OK();
    CONVGATE_RETURN_IF_ERROR(to.Write(std::string_view(buffer, static_cast<size_t>(n))));
  }
}

AttemptResult NoOutput(AttemptResult attempt, const std::string& problem) {
  attempt.error = ConversionError::kNoOutput;
  attempt.problem = problem;
  return attempt;
}

bool IsNonEmptyFile(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) &&
         std::filesystem::file_size(path, error) > 0 && !error;
}

bool IsIr(const std::filesystem::path& out) {
  std::error_code error;
  return out.extension() == ".xml" && std::filesystem::is_regular_file(IrWeightsPath(out), error);
}

AttemptResult CheckFolder(const std::filesystem::path& out, AttemptResult attempt) {
  std::error_code error;
  if (!std::filesystem::is_directory(out, error)) {
    return NoOutput(std::move(attempt),
                    "it reported success but wrote no folder at " + out.string());
  }
  if (OutputBytes(out) == 0) {
    return NoOutput(std::move(attempt), "it reported success but left " + out.string() + " empty");
  }
  return attempt;
}

// A folder copied file by file into `staging`, which then takes `to`'s place.
Status CopyFolderAtomic(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code error;
  if (to.has_parent_path()) std::filesystem::create_directories(to.parent_path(), error);
  const std::filesystem::path staging =
      to.parent_path() / ("." + to.filename().string() + "." + WorkDirName("copy"));
  const std::filesystem::path old =
      to.parent_path() / ("." + to.filename().string() + "." + WorkDirName("old"));
  std::filesystem::copy(from, staging, std::filesystem::copy_options::recursive, error);
  if (error) {
    RemoveWorkDir(staging);
    return Status::Unavailable("cannot copy " + from.string() + " to " + staging.string() + ": " +
                               error.message());
  }
  std::error_code absent;  // symlink_status sets it when `to` does not exist: no error here
  const bool replacing = std::filesystem::exists(std::filesystem::symlink_status(to, absent));
  if (replacing) std::filesystem::rename(to, old, error);
  if (!error) std::filesystem::rename(staging, to, error);
  if (error) {
    RemoveWorkDir(staging);
    return Status::Unavailable("cannot move the copy of " + from.string() + " to " + to.string() +
                               ": " + error.message());
  }
  if (replacing) RemoveWorkDir(old);
  return Status::OK();
}

}  // namespace

std::filesystem::path IrWeightsPath(const std::filesystem::path& xml) {
  std::filesystem::path bin = xml;
  return bin.replace_extension(".bin");
}

Result<std::string> DigestOutput(const std::filesystem::path& out) {
  std::error_code error;
  if (std::filesystem::is_directory(out, error)) return DigestSource(out);
  if (!IsIr(out)) return Sha256File(out);
  CONVGATE_ASSIGN_OR_RETURN(std::string xml_sha, Sha256File(out));
  CONVGATE_ASSIGN_OR_RETURN(std::string bin_sha, Sha256File(IrWeightsPath(out)));
  return Sha256Hex("xml " + xml_sha + "\nbin " + bin_sha + "\n");
}

int64_t OutputBytes(const std::filesystem::path& out) {
  std::error_code error;
  if (!std::filesystem::is_directory(out, error)) {
    int64_t bytes = static_cast<int64_t>(std::filesystem::file_size(out, error));
    if (error) return 0;
    if (IsIr(out))
      bytes += static_cast<int64_t>(std::filesystem::file_size(IrWeightsPath(out), error));
    return bytes;
  }
  int64_t total = 0;
  auto it = std::filesystem::recursive_directory_iterator(out, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    std::error_code file_error;
    if (it->is_regular_file(file_error)) total += static_cast<int64_t>(it->file_size(file_error));
  }
  return total;
}

AttemptResult CheckOutput(const std::filesystem::path& out, OutputLayout layout,
                          AttemptResult attempt) {
  if (layout == OutputLayout::kFolder) return CheckFolder(out, std::move(attempt));
  if (layout == OutputLayout::kOpenvinoIr && IsNonEmptyFile(out) &&
      !IsNonEmptyFile(IrWeightsPath(out))) {
    return NoOutput(std::move(attempt),
                    "it reported success but wrote no weights at " + IrWeightsPath(out).string());
  }
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
    Result<std::string> valid = CheckOnnxModelFile(out);
    if (!valid.ok()) {
      attempt.error = ConversionError::kInvalidOutput;
      attempt.problem =
          "it wrote a file that is not a valid ONNX model: " + valid.status().message();
    } else if (!valid->empty()) {
      attempt.notes.push_back(*valid);
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
  const int source = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (source < 0) {
    return Status::Unavailable("cannot read " + from.string() + ": " + std::strerror(errno));
  }
  Result<PendingFile> pending = PendingFile::Create(to);
  Status status = pending.ok() ? CopyBytes(source, from, *pending) : pending.status();
  ::close(source);
  return status.ok() ? pending->Commit() : status;
}

std::filesystem::path ExternalDataPath(const std::filesystem::path& out) {
  return graph::DataFileBeside(out);
}

Status CopyModelAtomic(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::error_code error;
  if (std::filesystem::is_directory(from, error)) return CopyFolderAtomic(from, to);
  if (IsIr(from)) {
    CONVGATE_RETURN_IF_ERROR(CopyFileAtomic(IrWeightsPath(from), IrWeightsPath(to)));
    return CopyFileAtomic(from, to);
  }
  const std::filesystem::path data = ExternalDataPath(from);
  if (!std::filesystem::exists(data, error)) return CopyFileAtomic(from, to);
  CONVGATE_RETURN_IF_ERROR(CopyFileAtomic(data, ExternalDataPath(to)));
  CONVGATE_ASSIGN_OR_RETURN(std::string model,
                            RelocateExternalData(from, data.filename().string(),
                                                 ExternalDataPath(to).filename().string()));
  return WriteFileAtomic(to, model);
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
