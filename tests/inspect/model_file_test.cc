// VerifyModelFile: each format it verifies, and each way a model file fails (missing, empty,
// truncated, wrong magic, missing external data, external data outside the model's folder).
#include "convgate/inspect/model_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zip.h>

#include <fstream>
#include <map>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/safetensors.h"
#include "graph/onnx_test_util.h"

namespace convgate::inspect {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::ParseOnnxText;
using testing::ScopedTempDir;
using testing::Serialize;
using testing::WriteModel;

onnx::ModelProto Identity() {
  return ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] x) => (float[2] y) { y = Identity(x) }
)");
}

// Identity plus an initializer `w` (float[4]) stored in the file `location`.
onnx::ModelProto WithExternalWeights(const std::string& location) {
  onnx::ModelProto model = Identity();
  onnx::TensorProto* weights = model.mutable_graph()->add_initializer();
  weights->set_name("w");
  weights->set_data_type(onnx::TensorProto::FLOAT);
  weights->add_dims(4);
  weights->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* entry = weights->add_external_data();
  entry->set_key("location");
  entry->set_value(location);
  entry = weights->add_external_data();
  entry->set_key("length");
  entry->set_value("16");
  return model;
}

TensorMap OneTensor() {
  TensorMap tensors;
  tensors.InsertOrAssign(
      "t", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({3}), {1.0f, 2.0f, 3.0f}));
  return tensors;
}

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

void Truncate(const fs::path& path, uint64_t by) {
  fs::resize_file(path, fs::file_size(path) - by);
}

class ModelFileTest : public ::testing::Test {
 protected:
  fs::path Path(const std::string& name) const { return dir_.path() / name; }

  ScopedTempDir dir_;
};

TEST_F(ModelFileTest, AnOnnxModelPassesWithItsSizeAndHash) {
  WriteModel(Identity(), Path("m.onnx"));
  const ModelFileCheck check = VerifyModelFile(Path("m.onnx"));
  EXPECT_TRUE(check.ok()) << check.problem;
  EXPECT_EQ(check.format, "onnx");
  EXPECT_EQ(check.size, fs::file_size(Path("m.onnx")));
  EXPECT_EQ(check.sha256, *Sha256File(Path("m.onnx")));
  ASSERT_TRUE(check.onnx.has_value());
  EXPECT_EQ(check.onnx->signature.inputs.size(), 1u);
  EXPECT_THAT(ModelFileCheckText(check), HasSubstr("verified: onnx, "));
  EXPECT_EQ(ModelFileCheckJson(check)["passed"], true);
}

TEST_F(ModelFileTest, ExternalDataMustBeThereAndInsideTheFolder) {
  fs::create_directories(Path("weights"));
  WriteModel(WithExternalWeights("weights/w.bin"), Path("m.onnx"));
  const ModelFileCheck missing = VerifyModelFile(Path("m.onnx"));
  EXPECT_EQ(missing.category, "missing-file");
  EXPECT_THAT(missing.problem, HasSubstr("external data file 'weights/w.bin' is missing"));
  ASSERT_EQ(missing.external_data.size(), 1u);
  EXPECT_FALSE(missing.external_data[0].present);

  WriteBytes(Path("weights/w.bin"), std::string(16, '\0'));
  const ModelFileCheck present = VerifyModelFile(Path("m.onnx"));
  EXPECT_TRUE(present.ok()) << present.problem;
  EXPECT_EQ(present.format, "onnx+external-data");
  EXPECT_EQ(present.external_data[0].size, 16u);
  EXPECT_THAT(ModelFileCheckText(present), HasSubstr("external data: weights/w.bin (16 B)"));

  for (const std::string location : {"../w.bin", "weights/../../w.bin", "/etc/passwd"}) {
    WriteModel(WithExternalWeights(location), Path("escape.onnx"));
    const ModelFileCheck escape = VerifyModelFile(Path("escape.onnx"));
    EXPECT_EQ(escape.category, "corrupt-file") << location;
    EXPECT_THAT(escape.problem, HasSubstr("'" + location + "' is not inside the model's folder"));
  }
  // ".." that stays inside is inside.
  WriteModel(WithExternalWeights("weights/../weights/w.bin"), Path("inside.onnx"));
  EXPECT_TRUE(VerifyModelFile(Path("inside.onnx")).ok());
}

TEST_F(ModelFileTest, TruncatedEmptyMissingAndWrongMagicFail) {
  WriteModel(WithExternalWeights("w.bin"), Path("m.onnx"));
  const std::string bytes = Serialize(WithExternalWeights("w.bin"));
  WriteBytes(Path("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  const ModelFileCheck cut = VerifyModelFile(Path("cut.onnx"));
  EXPECT_EQ(cut.category, "corrupt-file");
  EXPECT_THAT(cut.problem, HasSubstr("cut.onnx is not a readable model"));

  WriteBytes(Path("empty.onnx"), "");
  EXPECT_THAT(VerifyModelFile(Path("empty.onnx")).problem, HasSubstr("is empty (0 bytes)"));

  const ModelFileCheck absent = VerifyModelFile(Path("absent.onnx"));
  EXPECT_EQ(absent.category, "missing-file");
  EXPECT_THAT(absent.problem, HasSubstr("absent.onnx does not exist"));

  // Named like a safetensors file, holding neither it nor ONNX: the name's claim is what fails
  // ("not a safetensors file"), not an ONNX parse the bytes never asked for (issue 32, item 10).
  WriteBytes(Path("x.safetensors"), "this is not a model at all");
  const ModelFileCheck magic = VerifyModelFile(Path("x.safetensors"));
  EXPECT_EQ(magic.category, "corrupt-file");
  EXPECT_THAT(magic.problem, HasSubstr("x.safetensors: not a safetensors file"));
  EXPECT_THAT(ModelFileCheckText(magic), HasSubstr("verification FAILED (corrupt-file)"));
}

TEST_F(ModelFileTest, TensorFormatsAreParsedWhole) {
  ASSERT_TRUE(io::WriteSafetensors(Path("w.safetensors"), OneTensor()).ok());
  ASSERT_TRUE(io::WriteNpz(Path("w.npz"), OneTensor()).ok());
  ASSERT_TRUE(io::WriteNpy(Path("w.npy"), *OneTensor().Find("t")).ok());
  for (const auto& [name, format] : std::vector<std::pair<std::string, std::string>>{
           {"w.safetensors", "safetensors"}, {"w.npz", "npz"}, {"w.npy", "npy"}}) {
    const ModelFileCheck check = VerifyModelFile(Path(name));
    EXPECT_TRUE(check.ok()) << name << ": " << check.problem;
    EXPECT_EQ(check.format, format);
    EXPECT_EQ(check.sha256, *Sha256File(Path(name))) << name;
    Truncate(Path(name), 4);
    const ModelFileCheck cut = VerifyModelFile(Path(name));
    EXPECT_EQ(cut.category, "corrupt-file") << name;
    EXPECT_THAT(cut.problem, HasSubstr(name)) << name;
  }
}

// A zip holding `members` (name -> bytes), stored, as torch.jit.save writes its archives.
void WriteZip(const fs::path& path, const std::map<std::string, std::string>& members) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(archive, nullptr) << "zip_open error " << error;
  for (const auto& [name, bytes] : members) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    ASSERT_GE(zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8), 0) << name;
  }
  ASSERT_EQ(zip_close(archive), 0);
}

TEST_F(ModelFileTest, TorchScriptIsCheckedByItsZipDirectory) {
  // The members sniffing tells a TorchScript archive by (io/file_format.h).
  const fs::path model = Path("model.pt");
  WriteZip(model, {{"model/constants.pkl", std::string(64, 'c')},
                   {"model/code/__torch__.py", "def forward(self, x): return x\n"},
                   {"model/data.pkl", std::string(64, 'd')}});
  const ModelFileCheck check = VerifyModelFile(model);
  EXPECT_TRUE(check.ok()) << check.problem;
  EXPECT_EQ(check.format, "torchscript");
  Truncate(model, 30);  // the zip's central directory cut
  const ModelFileCheck cut = VerifyModelFile(model);
  EXPECT_EQ(cut.category, "corrupt-file");
  EXPECT_THAT(cut.problem, HasSubstr("model.pt"));
}

TEST_F(ModelFileTest, AFolderPasses) {
  fs::create_directories(Path("saved_model"));
  const ModelFileCheck check = VerifyModelFile(Path("saved_model"));
  EXPECT_TRUE(check.ok());
  EXPECT_EQ(check.format, "folder");
}

}  // namespace
}  // namespace convgate::inspect
