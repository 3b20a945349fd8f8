#include "graph/onnx_test_util.h"

#include <gtest/gtest.h>
#include <onnx/defs/parser.h>
#include <stdlib.h>

#include <fstream>

namespace convgate::testing {

onnx::ModelProto ParseOnnxText(const std::string& text) {
  onnx::ModelProto model;
  const onnx::Common::Status status = onnx::OnnxParser::Parse(model, text.c_str());
  EXPECT_TRUE(status.IsOK()) << status.ErrorMessage() << "\n" << text;
  return model;
}

std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  return bytes;
}

void WriteModel(const onnx::ModelProto& model, const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary);
  out << Serialize(model);
  EXPECT_TRUE(out.good()) << path;
}

ScopedTempDir::ScopedTempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "convgate_test_XXXXXX").string();
  const char* created = ::mkdtemp(pattern.data());
  EXPECT_NE(created, nullptr) << pattern;
  path_ = pattern;
}

ScopedTempDir::~ScopedTempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace convgate::testing
