// `convgate inspect` on the real binary: weights stored as Constant nodes, files that are not ONNX
// (TorchScript and PyTorch zips, pickles, safetensors, OpenVINO IR, unknown bytes) told apart by
// content and pointed to the command that takes them, truncated ONNX, and ONNX test case folders.
// Every fixture is made here, the zips with libzip.
#include <gtest/gtest.h>
#include <zip.h>

#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/test_case.h"
#include "graph/onnx_test_util.h"
#include "testing/cli_fixture.h"
#include "transform/models.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kTestAbs = "/usr/share/libonnx-testdata/data/node/test_abs";

// A string literal's bytes, embedded NULs included.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// Writes a zip archive holding `members` (name, bytes) in order, stored uncompressed.
void WriteZip(const fs::path& path,
              const std::vector<std::pair<std::string, std::string>>& members) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(archive, nullptr) << "zip_open " << error;
  for (const auto& [name, bytes] : members) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    ASSERT_NE(source, nullptr);
    ASSERT_GE(zip_file_add(archive, name.c_str(), source, ZIP_FL_ENC_UTF_8), 0);
  }
  ASSERT_EQ(zip_close(archive), 0);
}

// The members torch.jit.save writes for a module `M` whose forward takes a tensor and a float
// (the layout and code text of PyTorch 1.13's archives).
std::vector<std::pair<std::string, std::string>> TorchScriptMembers() {
  return {
      {"m/data.pkl", Bytes("\x80\x02"
                           "c__torch__\nM\nq\x00)\x81}(X\x08\x00\x00\x00training")},
      {"m/code/__torch__.py",
       "class M(Module):\n"
       "  __parameters__ = []\n"
       "  conv : __torch__.torch.nn.modules.conv.Conv2d\n"
       "  def forward(self: __torch__.M,\n"
       "    image: Tensor,\n"
       "    scale: float=1.) -> Tensor:\n"
       "    return torch.mul((self.conv).forward(image, ), scale)\n"},
      {"m/data/0", std::string(432, '\0')},
      {"m/data/1", std::string(16, '\0')},
      {"m/constants.pkl", Bytes("\x80\x02).")},
      {"m/version", "3\n"},
  };
}

class InspectCliTest : public testing::CliTest {
 protected:
  json InspectJson(const std::string& path) {
    ProcessResult r = Convgate({"inspect", path, "--json"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.exit_code == 0 ? json::parse(r.out) : json();
  }
};

TEST_F(InspectCliTest, CountsWeightsHeldInConstantNodes) {
  // paddle2onnx stores every weight as a Constant node: inspect used to say 0 parameters.
  const onnx::ModelProto model =
      testing::WeightsAsConstantNodes(testing::ParseOnnxText(testing::ConvBatchNormModel()));
  testing::WriteModel(model, Path("constants.onnx"));
  const json summary = InspectJson(Path("constants.onnx"));
  const int weights = 4 * 3 * 3 * 3 + 5 * 4;  // conv weight, conv bias and four BatchNorm stats
  EXPECT_EQ(summary["parameter_count"], weights) << summary.dump(2);
  EXPECT_EQ(summary["parameter_bytes"], weights * 4);
  EXPECT_EQ(summary["initializer_count"], 0);
  EXPECT_EQ(summary["constant_node_count"], 6);
  EXPECT_EQ(summary["constant_node_parameters"], weights);
  ProcessResult text = Convgate({"inspect", Path("constants.onnx")});
  EXPECT_NE(text.out.find("parameters   128 (512 B): 0 in 0 initializers (0 B), 128 in 6 "
                          "Constant nodes (512 B)"),
            std::string::npos)
      << text.out;
}

TEST_F(InspectCliTest, ATorchScriptArchiveSaysWhatItIsAndWhichCommandsTakeIt) {
  // Named .pt and, as users do by mistake, .onnx: the content decides.
  for (const char* name : {"model.pt", "model.onnx"}) {
    SCOPED_TRACE(name);
    WriteZip(Path(name), TorchScriptMembers());
    ProcessResult r = Convgate({"inspect", Path(name)});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.out.find("protobuf"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("a TorchScript archive"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("__torch__.M: forward(image: Tensor, scale: float=1.) -> Tensor"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("2 tensor records, 448 B"), std::string::npos) << r.out;
    // A TorchScript file named .onnx needs the backend said: the extension would pick ort.
    const std::string backend = std::string(name) == "model.pt" ? "" : " --backend torch";
    EXPECT_NE(r.out.find("convgate run " + Path(name) + backend + " --shape image:1x3x224x224"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("convgate convert " + Path(name) + " --to onnx -o model.onnx"),
              std::string::npos)
        << r.out;
  }
  const json described = InspectJson(Path("model.pt"));
  EXPECT_EQ(described["format"], "torchscript");
  EXPECT_EQ(described["module"]["class"], "__torch__.M");
  EXPECT_EQ(described["tensor_records"]["bytes"], 448);
}

TEST_F(InspectCliTest, PickledCheckpointsAreNamedAndNeverUnpickled) {
  WriteZip(Path("state.pth"),
           {{"state/data.pkl", Bytes("\x80\x02"
                                     "ccollections\nOrderedDict\nq\x00)Rq\x01.")},
            {"state/data/0", std::string(432, '\0')},
            {"state/version", "3\n"}});
  // pickle.dump({"a": 1}, f, protocol=4), and what torch.save wrote before PyTorch 1.6.
  ASSERT_TRUE(WriteFileAtomic(Path("plain.pkl"), Bytes("\x80\x04\x95\x0a\0\0\0\0\0\0\0}\x94\x8c\x01"
                                                       "a\x94K\x01s."))
                  .ok());
  ASSERT_TRUE(WriteFileAtomic(Path("legacy.pth"),
                              Bytes("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50"
                                    "\x19.\x80\x02M\xe9\x03."))
                  .ok());
  const json state = InspectJson(Path("state.pth"));
  EXPECT_EQ(state["format"], "pytorch-checkpoint") << state.dump(2);
  EXPECT_EQ(state["root_class"], "collections.OrderedDict");
  EXPECT_NE(state["note"].get<std::string>().find("never unpickles"), std::string::npos);
  EXPECT_EQ(InspectJson(Path("plain.pkl"))["pickle_protocol"], 4);
  EXPECT_EQ(InspectJson(Path("legacy.pth"))["format"], "pytorch-legacy-checkpoint");
}

TEST_F(InspectCliTest, SafetensorsListsItsTensors) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"F16","shape":[3],"data_offsets":[24,30]}})";
  std::string bytes(8, '\0');
  for (int idx = 0; idx < 8; ++idx)
    bytes[idx] = static_cast<char>((header.size() >> (8 * idx)) & 0xff);
  ASSERT_TRUE(WriteFileAtomic(Path("w.safetensors"), bytes + header + std::string(30, '\0')).ok());
  const json described = InspectJson(Path("w.safetensors"));
  EXPECT_EQ(described["format"], "safetensors");
  EXPECT_EQ(described["parameter_count"], 9);
  EXPECT_EQ(described["tensors"].size(), 2u);
  ProcessResult text = Convgate({"inspect", Path("w.safetensors")});
  EXPECT_NE(text.out.find("2 tensors, 9 parameters (F16 x1, F32 x1)"), std::string::npos)
      << text.out;
}

// The whole file is read (io/safetensors.h): values summarized, corrupt offsets refused.
TEST_F(InspectCliTest, SafetensorsValuesAreReadAndCheckedLikeTensorFiles) {
  auto write = [&](const std::string& name, const std::string& header, const std::string& data) {
    std::string bytes(8, '\0');
    for (int idx = 0; idx < 8; ++idx)
      bytes[idx] = static_cast<char>((header.size() >> (8 * idx)) & 0xff);
    ASSERT_TRUE(WriteFileAtomic(Path(name), bytes + header + data).ok());
  };
  const float values[2] = {-1.5f, 4.0f};
  write("ok.safetensors", R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
        std::string(reinterpret_cast<const char*>(values), 8));
  const json described = InspectJson(Path("ok.safetensors"));
  EXPECT_EQ(described["tensors"][0]["stats"]["min"], -1.5);
  EXPECT_EQ(described["tensors"][0]["stats"]["max"], 4.0);
  write("overlap.safetensors",
        R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
        R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
        std::string(12, '\0'));
  ProcessResult overlap = Convgate({"inspect", Path("overlap.safetensors")});
  EXPECT_EQ(overlap.exit_code, 3) << Describe(overlap);
  EXPECT_NE(overlap.err.find("overlap.safetensors: tensor 'b' begins at byte 4 of the data, "
                             "expected 8 (overlap)"),
            std::string::npos)
      << overlap.err;
}

// Tensor statistics read as a person writes them (6 significant digits); --json keeps every one.
TEST_F(InspectCliTest, TensorStatisticsAreShortInTextAndExactInJson) {
  const Tensor tensor = Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), {0.1f, 0.3f});
  ASSERT_TRUE(io::WriteNpy(Path("x.npy"), tensor).ok());
  ProcessResult text = Convgate({"inspect", Path("x.npy")});
  EXPECT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_NE(text.out.find("float32[2]  min 0.1  max 0.3  mean 0.2  NaN 0"), std::string::npos)
      << text.out;
  EXPECT_NEAR(InspectJson(Path("x.npy"))["tensors"][0]["max"].get<double>(), 0.3f, 0.0);
}

// A folder with config.json is a Hugging Face model: its kind, task (by the gate's rules),
// weight files and parameters, and the commands that take it. A folder without one is refused
// naming what inspect reads; a config.json that is not JSON is named.
TEST_F(InspectCliTest, HuggingFaceFolderIsDescribed) {
  const fs::path folder = dir_ / "tiny-bert";
  fs::create_directories(folder);
  ASSERT_TRUE(WriteFileAtomic(folder / "config.json",
                              R"({"model_type": "bert", "architectures": ["BertForMaskedLM"]})")
                  .ok());
  const std::string header = R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";
  std::string bytes(8, '\0');
  for (int idx = 0; idx < 8; ++idx) {
    bytes[idx] = static_cast<char>((header.size() >> (8 * idx)) & 0xff);
  }
  ASSERT_TRUE(
      WriteFileAtomic(folder / "model.safetensors", bytes + header + std::string(24, '\0')).ok());
  const json described = InspectJson(folder.string());
  EXPECT_EQ(described["format"], "hf-folder") << described.dump(1);
  EXPECT_EQ(described["kind"], "transformers");
  EXPECT_EQ(described["task"]["task"], "fill-mask");
  EXPECT_EQ(described["parameter_count"], 6);
  EXPECT_EQ(described["tokenizer"], false);
  ProcessResult text = Convgate({"inspect", folder.string()});
  EXPECT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_NE(text.out.find("convgate verify " + folder.string()), std::string::npos) << text.out;

  ASSERT_TRUE(WriteFileAtomic(folder / "model.onnx", "not really").ok());
  EXPECT_EQ(InspectJson(folder.string())["kind"], "optimum-onnx");

  ASSERT_TRUE(WriteFileAtomic(folder / "config.json", "{").ok());
  ProcessResult broken = Convgate({"inspect", folder.string()});
  EXPECT_EQ(broken.exit_code, 3) << Describe(broken);
  EXPECT_NE(broken.err.find("config.json: not a JSON object"), std::string::npos) << broken.err;

  fs::create_directories(Path("empty"));
  ProcessResult empty = Convgate({"inspect", Path("empty")});
  EXPECT_NE(empty.exit_code, 0) << Describe(empty);
  EXPECT_NE(empty.err.find("Hugging Face model folder (config.json)"), std::string::npos)
      << empty.err;
}

TEST_F(InspectCliTest, OpenVinoIrShowsItsInputsAndTheBackendThatRunsIt) {
  ASSERT_TRUE(WriteFileAtomic(Path("model.xml"),
                              "<?xml version=\"1.0\"?>\n<net name=\"tiny\" version=\"11\">\n"
                              "<layers>\n"
                              "<layer id=\"0\" name=\"input\" type=\"Parameter\" "
                              "version=\"opset1\">\n"
                              "<data shape=\"1,3,8,8\" element_type=\"f32\"/>\n</layer>\n"
                              "<layer id=\"1\" name=\"relu\" type=\"ReLU\" version=\"opset1\"/>\n"
                              "<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\"/>\n"
                              "</layers>\n</net>\n")
                  .ok());
  ProcessResult r = Convgate({"inspect", Path("model.xml")});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("an OpenVINO IR model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input f32[1,3,8,8]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 layers: Parameter x1 ReLU x1 Result x1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model.bin is missing"), std::string::npos) << r.out;
#if CONVGATE_WITH_OPENVINO
  EXPECT_NE(r.out.find("runs on the openvino backend"), std::string::npos) << r.out;
#else
  EXPECT_NE(r.out.find("--exec 'PROGRAM {model} {inputs} {outputs}'"), std::string::npos) << r.out;
#endif
}

TEST_F(InspectCliTest, TruncatedOnnxAndUnknownBytesAreLoadErrorsThatSayWhich) {
  const std::string bytes =
      testing::Serialize(testing::ParseOnnxText(testing::ConvBatchNormModel()));
  ASSERT_TRUE(WriteFileAtomic(Path("cut.onnx"), bytes.substr(0, bytes.size() / 2)).ok());
  ProcessResult cut = Convgate({"inspect", Path("cut.onnx")});
  EXPECT_EQ(cut.exit_code, 3) << Describe(cut);
  EXPECT_NE(cut.err.find(Path("cut.onnx") + ": not a valid ONNX model: the file is truncated"),
            std::string::npos)
      << cut.err;
  ASSERT_TRUE(WriteFileAtomic(Path("notes.txt"), "hello, this is not a model\n").ok());
  ProcessResult text = Convgate({"inspect", Path("notes.txt")});
  EXPECT_EQ(text.exit_code, 3) << Describe(text);
  EXPECT_NE(text.err.find("does not start like an ONNX model"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("recognizes TorchScript"), std::string::npos) << text.err;
  WriteZip(Path("cut.pt"), TorchScriptMembers());
  Result<std::string> zip = ReadFile(Path("cut.pt"));
  ASSERT_TRUE(zip.ok());
  ASSERT_TRUE(WriteFileAtomic(Path("cut.pt"), zip->substr(0, zip->size() / 2)).ok());
  ProcessResult cut_zip = Convgate({"inspect", Path("cut.pt")});
  EXPECT_EQ(cut_zip.exit_code, 3) << Describe(cut_zip);
  EXPECT_NE(cut_zip.err.find("truncated"), std::string::npos) << cut_zip.err;
}

TEST_F(InspectCliTest, AnOnnxTestCaseShowsEveryDataSetAndItsModel) {
  if (!fs::exists(kTestAbs)) GTEST_SKIP() << "libonnx-testdata is not installed";
  ProcessResult r = Convgate({"inspect", kTestAbs.string()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("an ONNX test case folder (1 data set, with its model)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("    input   x  float32[3, 4, 5]  min "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    output  y  float32[3, 4, 5]  min "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 nodes: Abs x1"), std::string::npos) << r.out;
  const json described = InspectJson(kTestAbs.string());
  EXPECT_EQ(described["format"], "onnx-test-case");
  EXPECT_EQ(described["model"]["op_histogram"]["Abs"], 1);
  const json& data_set = described["data_sets"][0];
  EXPECT_EQ(data_set["inputs"][0]["name"], "x");
  EXPECT_EQ(data_set["outputs"][0]["shape"], json({3, 4, 5}));
  EXPECT_GE(data_set["outputs"][0]["min"].get<double>(), 0.0);  // |x|
  // One data set folder on its own finds the model beside it.
  const json one = InspectJson((kTestAbs / "test_data_set_0").string());
  EXPECT_EQ(one["format"], "onnx-test-data-set");
  EXPECT_EQ(one["model"]["op_histogram"]["Abs"], 1);
}

TEST_F(InspectCliTest, ATestCaseWithoutAModelCountsNaNAndInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  TensorMap inputs, outputs;
  ASSERT_TRUE(inputs
                  .Insert("a", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({4}),
                                                         {1.0f, nan, inf, -2.0f}))
                  .ok());
  ASSERT_TRUE(
      outputs.Insert("b", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({2}), {3, 5})).ok());
  ASSERT_TRUE(io::WriteTestDataSet(dir_ / "case", 0, inputs, outputs).ok());
  ASSERT_TRUE(io::WriteTestDataSet(dir_ / "case", 1, inputs, outputs).ok());
  const json described = InspectJson(Path("case"));
  ASSERT_EQ(described["data_sets"].size(), 2u) << described.dump(2);
  EXPECT_TRUE(described["model"].is_null());
  const json& a = described["data_sets"][1]["inputs"][0];
  EXPECT_EQ(a["name"], "a");
  EXPECT_EQ(a["nan"], 1);
  EXPECT_EQ(a["inf"], 1);
  EXPECT_EQ(a["min"], -2.0);
  EXPECT_EQ(described["data_sets"][0]["outputs"][0]["mean"], 4.0);
}

TEST_F(InspectCliTest, AFolderThatIsNoTestCaseIsALoadError) {
  fs::create_directories(dir_ / "empty");
  ProcessResult r = Convgate({"inspect", Path("empty")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("not a model, tensor file, Hugging Face model folder (config.json) or ONNX "
                       "test case folder"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace convgate
