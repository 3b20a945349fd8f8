#include "convert/key.h"

#include <algorithm>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/graph/internal/external_data.h"
#include "convgate/graph/internal/model_proto.h"

namespace convgate::convert {
namespace {

// Bump when the key's text changes, so old entries are simply never found again.
constexpr char kKeyVersion[] = "convgate conversion key v1";

void Field(std::string& text, std::string_view name, std::string_view value) {
  text += std::string(name) + " " + std::to_string(value.size()) + ":" + std::string(value) + "\n";
}

Result<std::string> DigestDirectory(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  auto options = std::filesystem::directory_options::follow_directory_symlink;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, options, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  if (error) return Status::Unavailable("cannot list " + dir.string() + ": " + error.message());
  std::sort(files.begin(), files.end());
  std::string listing;
  for (const std::filesystem::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(std::string sha, Sha256File(file));
    Field(listing, std::filesystem::relative(file, dir).generic_string(), sha);
  }
  return Sha256Hex(listing);
}

// An ONNX model's data files are part of it: two models with one graph and different weights
// must not share a cache entry. A model the structure reader cannot parse keeps its own digest
// (its converter says what is wrong with it), as does a data file that is missing.
Result<std::string> WithExternalData(const std::filesystem::path& path, std::string sha) {
  int64_t size = 0;
  Result<onnx::ModelProto> model = graph::ParseModelStructureFile(path, &size);
  if (!model.ok()) return sha;
  const std::vector<std::string> locations = graph::ExternalDataLocations(*model);
  if (locations.empty()) return sha;
  std::string listing;
  Field(listing, "model", sha);
  for (const std::string& location : locations) {
    Result<std::filesystem::path> file = graph::ExternalDataFile(path, location);
    Result<std::string> data_sha = file.ok() ? Sha256File(*file) : file.status();
    Field(listing, location, data_sha.ok() ? *data_sha : "unreadable");
  }
  return Sha256Hex(listing);
}

}  // namespace

std::string CacheKey(const KeyMaterial& material) {
  std::string text = std::string(kKeyVersion) + "\n";
  Field(text, "source", material.source_digest);
  Field(text, "kind", material.kind);
  Field(text, "tool", material.tool);
  Field(text, "tool_version", material.tool_version);
  Field(text, "converter", material.converter_identity);
  for (const auto& [name, value] : material.params) {
    Field(text, "param", name);
    Field(text, "value", value);
  }
  Field(text, "output_extension", material.output_extension);
  return Sha256Hex(text);
}

Result<std::string> DigestSource(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return Status::NotFound(path.string() + " does not exist");
  }
  if (std::filesystem::is_directory(path, error)) return DigestDirectory(path);
  // A FIFO would block the hash forever and /dev/zero never end: a source is a file or a folder.
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(path));
  CONVGATE_ASSIGN_OR_RETURN(std::string sha, Sha256File(path));
  if (path.extension() != ".onnx") return sha;
  return WithExternalData(path, std::move(sha));
}

}  // namespace convgate::convert
