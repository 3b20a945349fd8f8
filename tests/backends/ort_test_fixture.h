// Fixture for tests of the "ort" backend: models are written to a temp dir and loaded from there.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "convgate/backends/registry.h"
#include "graph/onnx_test_util.h"

namespace convgate::backends {

class OrtTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if !CONVGATE_WITH_ONNXRUNTIME
    GTEST_SKIP() << "built without ONNX Runtime (CONVGATE_WITH_ONNXRUNTIME=OFF)";
#endif
    Result<std::unique_ptr<Backend>> backend = CreateBackend("ort");
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }

  std::filesystem::path Write(const onnx::ModelProto& model, const std::string& file) {
    const std::filesystem::path path = dir_.path() / file;
    testing::WriteModel(model, path);
    return path;
  }

  Result<std::unique_ptr<Model>> Load(const std::filesystem::path& path) {
    return backend_->Load(path, LoadOptions{.intra_op_threads = 1});
  }

  // Parses ONNX text, writes it as `file` and loads it; fails the test if loading fails.
  std::unique_ptr<Model> LoadText(const std::string& text, const std::string& file = "m.onnx") {
    Result<std::unique_ptr<Model>> model = Load(Write(testing::ParseOnnxText(text), file));
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return model.ok() ? std::move(model).value() : nullptr;
  }

  std::string PathOf(const std::string& file) const { return (dir_.path() / file).string(); }

  testing::ScopedTempDir dir_;
  std::unique_ptr<Backend> backend_;
};

inline Tensor Zeros(DType dtype, Shape shape) {
  return std::move(Tensor::Allocate(dtype, std::move(shape))).value();
}

inline bool Contains(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

}  // namespace convgate::backends
