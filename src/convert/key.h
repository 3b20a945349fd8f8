// The cache key: what decides a conversion's output, hashed (internal to src/convert).
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "convgate/core/status.h"

namespace convgate::convert {

struct KeyMaterial {
  std::string source_digest;  // DigestSource, or a digest of a non-file source's name
  std::string kind;
  std::string tool;
  std::string tool_version;
  std::string converter_identity;
  std::map<std::string, std::string> params;
  std::string output_extension;  // ".onnx": a converter may write different formats by name
};

// Lower-case hex sha256 of a canonical text of `material` (every field, length-prefixed, so no
// two different materials share a text).
std::string CacheKey(const KeyMaterial& material);

// sha256 of a file; for a directory, sha256 over its sorted relative paths and their files'
// sha256 (symlinks followed). NotFound naming the path when it does not exist.
Result<std::string> DigestSource(const std::filesystem::path& path);

}  // namespace convgate::convert
