// graph/internal/external_data.h: anchoring a model's external data (and refusing locations a
// hostile model names), reading a tensor from its file, and writing tensors into a data file of
// the output's own.
#include "convgate/graph/internal/external_data.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

namespace fs = std::filesystem;

class ExternalDataTest : public ::testing::Test {
 protected:
  // A model whose float32 [rows, 4] initializer `w` lives at `location` (offset 0, its length),
  // the values 0, 1, 2, ... written there (or `data_bytes` bytes of them, to truncate).
  onnx::ModelProto Model(const std::string& location, int rows = 4, int64_t data_bytes = -1) {
    onnx::ModelProto model = testing::ParseOnnxText(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1,4] x) => (float[1,4] y) { y = MatMul(x, w) }
    )");
    std::vector<float> values(static_cast<size_t>(rows) * 4);
    for (size_t idx = 0; idx < values.size(); ++idx) values[idx] = static_cast<float>(idx);
    onnx::TensorProto* w = model.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(rows);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    const int64_t bytes = static_cast<int64_t>(values.size() * sizeof(float));
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", location},
                                     {"offset", "0"},
                                     {"length", std::to_string(bytes)}}) {
      onnx::StringStringEntryProto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    if (!location.empty() && location.find("..") == std::string::npos && location[0] != '/') {
      std::ofstream(dir_.path() / location, std::ios::binary)
          .write(reinterpret_cast<const char*>(values.data()), data_bytes < 0 ? bytes : data_bytes);
    }
    return model;
  }
  fs::path ModelPath() const { return dir_.path() / "model.onnx"; }

  testing::ScopedTempDir dir_;
};

TEST_F(ExternalDataTest, AnchoredTensorsReadTheirBytesAndLoadInline) {
  onnx::ModelProto model = Model("weights.bin");
  EXPECT_TRUE(HasExternalTensors(model));
  EXPECT_EQ(ExternalDataLocations(model), std::vector<std::string>{"weights.bin"});
  ASSERT_TRUE(AnchorExternalData(model, ModelPath()).ok());
  onnx::TensorProto& w = *model.mutable_graph()->mutable_initializer(0);
  Result<std::string> bytes = ReadExternalBytes(w);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  ASSERT_EQ(bytes->size(), 64u);
  float fifth = 0;
  std::memcpy(&fifth, bytes->data() + 5 * sizeof(float), sizeof(float));
  EXPECT_EQ(fifth, 5.0f);
  ASSERT_TRUE(LoadExternalData(w).ok());
  EXPECT_EQ(w.data_location(), onnx::TensorProto::DEFAULT);
  EXPECT_EQ(w.raw_data(), *bytes);
  EXPECT_FALSE(HasExternalTensors(model));
}

// What a hostile or broken model names is refused before a byte is read, naming the tensor.
TEST_F(ExternalDataTest, LocationsOutsideTheFolderMissingOrShortFilesAreRefused) {
  for (const auto& [location, expected] :
       {std::pair<std::string, std::string>{"/etc/passwd", "not a file in the model's folder"},
        {"../../etc/shadow", "not a file in the model's folder"},
        {"missing.bin", "does not exist"}}) {
    onnx::ModelProto model = Model(location);
    fs::remove(dir_.path() / "missing.bin");
    Status status = AnchorExternalData(model, ModelPath());
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << location;
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("tensor 'w'"), std::string::npos) << status.message();
    EXPECT_NE(status.message().find(ModelPath().string()), std::string::npos) << status.message();
  }
  onnx::ModelProto truncated = Model("short.bin", 4, 10);
  Status status = AnchorExternalData(truncated, ModelPath());
  EXPECT_NE(status.message().find("runs past the end of"), std::string::npos) << status.message();
  fs::create_directory(dir_.path() / "folder.bin");
  onnx::ModelProto folder = Model("folder.bin");
  EXPECT_NE(AnchorExternalData(folder, ModelPath()).message().find("not a regular file"),
            std::string::npos);
}

TEST_F(ExternalDataTest, ALengthThatDisagreesWithTheDimsIsRefused) {
  onnx::ModelProto model = Model("weights.bin");
  model.mutable_graph()->mutable_initializer(0)->set_dims(0, 3);  // 48 bytes, the file says 64
  Status status = AnchorExternalData(model, ModelPath());
  EXPECT_NE(status.message().find("64 bytes, its dtype and dims need 48"), std::string::npos)
      << status.message();
}

// The writer copies external tensors across and moves large inline ones out; the model written
// beside its data file reads back the same values from there.
TEST_F(ExternalDataTest, TheWriterPlacesEveryTensorInTheOutputsDataFile) {
  onnx::ModelProto model = Model("weights.bin", 20000);  // 320 KB: aligned
  ASSERT_TRUE(AnchorExternalData(model, ModelPath()).ok());
  onnx::TensorProto* inline_large = model.mutable_graph()->add_initializer();
  inline_large->set_name("big_inline");
  inline_large->set_data_type(onnx::TensorProto::UINT8);
  inline_large->add_dims(2000);
  inline_large->set_raw_data(std::string(2000, '\x07'));
  onnx::TensorProto* inline_small = model.mutable_graph()->add_initializer();
  inline_small->set_name("small");
  inline_small->set_data_type(onnx::TensorProto::UINT8);
  inline_small->add_dims(3);
  inline_small->set_raw_data("abc");
  const fs::path out = dir_.path() / "out" / "converted.onnx";
  fs::create_directories(out.parent_path());
  ASSERT_EQ(DataFileBeside(out), dir_.path() / "out" / "converted.onnx.data");
  Status written = WriteModelWithExternalData(model, out, DataFileBeside(out));
  ASSERT_TRUE(written.ok()) << written.message();

  std::ifstream in(out, std::ios::binary);
  onnx::ModelProto reread;
  ASSERT_TRUE(reread.ParseFromIstream(&in));
  EXPECT_EQ(ExternalDataLocations(reread), std::vector<std::string>{"converted.onnx.data"});
  EXPECT_EQ(reread.graph().initializer(2).raw_data(), "abc");  // small: stays inline
  ASSERT_TRUE(AnchorExternalData(reread, out).ok());
  Result<std::string> w = ReadExternalBytes(reread.graph().initializer(0));
  ASSERT_TRUE(w.ok());
  float last = 0;
  std::memcpy(&last, w->data() + w->size() - sizeof(float), sizeof(float));
  EXPECT_EQ(last, 79999.0f);
  EXPECT_EQ(ReadExternalBytes(reread.graph().initializer(1)).value(), std::string(2000, '\x07'));
  // The large tensor starts on a page: ONNX Runtime can map it.
  for (const onnx::StringStringEntryProto& entry : reread.graph().initializer(0).external_data()) {
    if (entry.key() == "offset") {
      EXPECT_EQ(std::stoll(entry.value()) % 4096, 0);
    }
  }
}

}  // namespace
}  // namespace convgate::graph
