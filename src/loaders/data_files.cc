// Finding and reading the files a --data spec names.
#include <glob.h>

#include <algorithm>
#include <cctype>
#include <system_error>

#include "convgate/core/file_util.h"
#include "convgate/core/join.h"
#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

namespace fs = std::filesystem;

std::string LowerExtension(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

bool IsGlob(const std::string& path) { return path.find_first_of("*?[") != std::string::npos; }

std::vector<fs::path> Glob(const std::string& pattern) {
  std::vector<fs::path> found;
  glob_t matches{};
  if (::glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t idx = 0; idx < matches.gl_pathc; ++idx) found.emplace_back(matches.gl_pathv[idx]);
  }
  ::globfree(&matches);
  return found;  // glob sorts its matches
}

}  // namespace

Result<std::vector<fs::path>> ListDataFiles(const std::string& path,
                                            const std::vector<std::string>& extensions,
                                            std::string_view kind) {
  std::error_code error;
  if (IsGlob(path) && !fs::exists(path, error)) {
    std::vector<fs::path> files = Glob(path);
    if (files.empty()) return Status::NotFound("--data " + path + ": no file matches");
    return files;
  }
  if (!fs::exists(path, error)) return Status::NotFound("--data " + path + " does not exist");
  if (!fs::is_directory(path, error)) return std::vector<fs::path>{fs::path(path)};
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
    if (!entry.is_regular_file(error)) continue;
    const std::string extension = LowerExtension(entry.path());
    if (std::find(extensions.begin(), extensions.end(), extension) == extensions.end()) continue;
    files.push_back(entry.path());
  }
  if (error) {
    return Status::Unavailable("--data " + path + ": cannot list the folder: " + error.message());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return Status::NotFound("--data " + path + " holds no " + std::string(kind) + " files (" +
                            JoinComma(extensions) + ")");
  }
  return files;
}

Result<std::string> ReadDataFile(const fs::path& path, const std::string& input,
                                 const Limits& limits, std::vector<inputs::DataFile>& files) {
  CONVGATE_ASSIGN_OR_RETURN(
      std::string bytes,
      ReadFile(path, static_cast<uint64_t>(limits.max_tensor_bytes), "--max-tensor-bytes"));
  files.push_back({input, path.string(), Sha256Hex(bytes)});
  return bytes;
}

std::vector<Line> NonBlankLines(std::string_view bytes) {
  std::vector<Line> lines;
  size_t start = 0, number = 0;
  while (start < bytes.size()) {
    size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string_view line = bytes.substr(start, end - start);
    ++number;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) lines.push_back({number, line});
  }
  return lines;
}

Status CheckNumericInput(const InputPlan& plan, std::string_view kind) {
  if (plan.dtype != DType::kString && plan.dtype != DType::kBool) return Status::OK();
  return Status::InvalidArgument("--data " + std::string(kind) + ": input '" + plan.info->name +
                                 "' is " + std::string(DTypeName(plan.dtype)) + ", which " +
                                 std::string(kind) + " data cannot fill");
}

}  // namespace convgate::loaders
