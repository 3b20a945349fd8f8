// Helpers for tests that build tiny ONNX models in code (shared by graph_test and backends_test).
#pragma once

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <string>

namespace convgate::testing {

// Parses ONNX textual syntax (onnx/defs/parser.h). A parse error fails the calling test and
// returns an empty model.
onnx::ModelProto ParseOnnxText(const std::string& text);

// Serializes `model` to `path`; fails the calling test if that is impossible.
void WriteModel(const onnx::ModelProto& model, const std::filesystem::path& path);

std::string Serialize(const onnx::ModelProto& model);

// A fresh directory under the system temp dir, removed with its contents by the destructor.
class ScopedTempDir {
 public:
  ScopedTempDir();
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace convgate::testing
