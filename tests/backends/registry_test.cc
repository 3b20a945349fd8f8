#include "convgate/backends/registry.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace convgate::backends {
namespace {

TEST(Registry, DefaultBackendForOnnxIsOrt) {
  EXPECT_EQ(*DefaultBackendFor("models/resnet.onnx"), "ort");
  EXPECT_EQ(*DefaultBackendFor("MODEL.ONNX"), "ort");
}

TEST(Registry, UnknownFormatNamesTheFileAndTheKnownFormats) {
  Result<std::string> backend = DefaultBackendFor("weights/model.tflite");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(backend.status().message().find("weights/model.tflite"), std::string::npos);
  EXPECT_NE(backend.status().message().find(".onnx"), std::string::npos);
  EXPECT_FALSE(DefaultBackendFor("no_extension").ok());
}

TEST(Registry, UnknownBackendIsNotFoundListingAvailableOnes) {
  Result<std::unique_ptr<Backend>> backend = CreateBackend("tensorrt");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kNotFound);
  EXPECT_NE(backend.status().message().find("'tensorrt'"), std::string::npos);
  for (const std::string& name : AvailableBackends()) {
    EXPECT_NE(backend.status().message().find(name), std::string::npos) << name;
  }
}

TEST(Registry, EveryAvailableBackendCanBeCreated) {
  for (const std::string& name : AvailableBackends()) {
    Result<std::unique_ptr<Backend>> backend = CreateBackend(name);
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    EXPECT_EQ((*backend)->name(), name);
    EXPECT_FALSE((*backend)->version().empty());
  }
#if CONVGATE_WITH_ONNXRUNTIME
  const std::vector<std::string> names = AvailableBackends();
  EXPECT_NE(std::find(names.begin(), names.end(), "ort"), names.end());
#endif
}

}  // namespace
}  // namespace convgate::backends
