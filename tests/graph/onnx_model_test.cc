#include "convgate/graph/onnx_model.h"

#include <gtest/gtest.h>

#include <fstream>

#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::ScopedTempDir;
using ::convgate::testing::Serialize;
using ::convgate::testing::WriteModel;

// Add, then an If whose branches hold one node each; w is a float[2] initializer (8 bytes), s an
// int64[3] one (24 bytes).
constexpr char kIfModel[] = R"(
<ir_version: 8, opset_import: ["" : 15, "com.example" : 1], producer_name: "convgate-test",
 producer_version: "0.1">
main_graph (float[N, 2] x, bool c, int64[3] s) => (float[N, 2] y, float[?, unk] y2)
  <float[2] w = {1.0, 2.0}, int64[3] s = {1, 2, 3}>
{
  t = Add(x, w)
  y = If(c) <then_branch = g1 () => (float[N, 2] a) { a = Identity(t) },
             else_branch = g2 () => (float[N, 2] b) { b = Neg(t) }>
  y2 = com.example.Custom(t)
}
)";

std::string Message(const Status& status) { return status.message(); }

TEST(SummarizeOnnxModel, ReportsOpsetsHistogramAndParameters) {
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "if.onnx";
  WriteModel(ParseOnnxText(kIfModel), path);

  Result<ModelSummary> summary = SummarizeOnnxModel(path);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->path, path);
  EXPECT_EQ(summary->format, "onnx");
  EXPECT_EQ(summary->sha256, *Sha256File(path));
  EXPECT_EQ(summary->file_bytes, static_cast<int64_t>(std::filesystem::file_size(path)));
  EXPECT_EQ(summary->ir_version, 8);
  ASSERT_EQ(summary->opsets.size(), 2u);
  EXPECT_EQ(summary->opsets[0].domain, "");
  EXPECT_EQ(summary->opsets[0].version, 15);
  EXPECT_EQ(summary->opsets[1].domain, "com.example");
  EXPECT_EQ(summary->producer_name, "convgate-test");
  EXPECT_EQ(summary->producer_version, "0.1");
  EXPECT_EQ(summary->graph_name, "main_graph");

  const std::map<std::string, int64_t> expected_histogram = {
      {"Add", 1}, {"If", 1}, {"Identity", 1}, {"Neg", 1}, {"com.example.Custom", 1}};
  EXPECT_EQ(summary->op_histogram, expected_histogram);
  EXPECT_EQ(summary->node_count, 5);
  EXPECT_EQ(summary->initializer_count, 2);
  EXPECT_EQ(summary->parameter_count, 5);
  EXPECT_EQ(summary->initializer_bytes, 2 * 4 + 3 * 8);
  EXPECT_FALSE(summary->has_external_data);
}

TEST(SummarizeOnnxModel, SignatureSkipsInitializersAndKeepsSymbolicDims) {
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "if.onnx";
  WriteModel(ParseOnnxText(kIfModel), path);
  Result<ModelSummary> summary = SummarizeOnnxModel(path);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();

  // s is both an input and an initializer (the pre-IR-4 style): a weight, not an input.
  const Signature& signature = summary->signature;
  ASSERT_EQ(signature.inputs.size(), 2u);
  EXPECT_EQ(signature.inputs[0].name, "x");
  EXPECT_EQ(signature.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(signature.inputs[0].type_name, "float32");
  EXPECT_EQ(FormatDims(signature.inputs[0]), "[N, 2]");
  EXPECT_EQ(signature.inputs[1].dtype, DType::kBool);
  EXPECT_EQ(FormatDims(signature.inputs[1]), "[]");
  ASSERT_EQ(signature.outputs.size(), 2u);
  EXPECT_EQ(signature.outputs[0].name, "y");
  // The parser writes '?' as a dimension with neither value nor symbol.
  EXPECT_EQ(FormatDims(signature.outputs[1]), "[?, unk]");
  EXPECT_TRUE(signature.outputs[1].shape[1].symbol == "unk");
}

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                               const std::string& name) {
  onnx::ValueInfoProto* info = list->Add();
  info->set_name(name);
  return info;
}

TEST(SummarizeOnnxModel, StringTensorsAreDTypeString) {
  ScopedTempDir dir;
  WriteModel(ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (string[N, 2] words) => (string[N, 2] same) { same = Identity(words) }
)"),
             dir.path() / "strings.onnx");
  Result<ModelSummary> summary = SummarizeOnnxModel(dir.path() / "strings.onnx");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  for (const TensorInfo* info : {&summary->signature.inputs[0], &summary->signature.outputs[0]}) {
    EXPECT_EQ(info->dtype, DType::kString) << info->name;
    EXPECT_EQ(info->type_name, "string") << info->name;
    EXPECT_EQ(FormatDims(*info), "[N, 2]") << info->name;
  }
}

TEST(SummarizeOnnxModel, NamesTypesConvgateCannotHold) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float x) => (float y) { y = Identity(x) }
)");
  onnx::GraphProto* graph = model.mutable_graph();
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  graph->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  onnx::TypeProto* seq = AddValue(graph->mutable_output(), "seq")->mutable_type();
  seq->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  onnx::TypeProto* opt = AddValue(graph->mutable_output(), "opt")->mutable_type();
  opt->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  onnx::TypeProto* map = AddValue(graph->mutable_output(), "map")->mutable_type();
  map->mutable_map_type()->set_key_type(onnx::TensorProto::INT64);
  map->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  AddValue(graph->mutable_output(), "c64")
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::COMPLEX64);
  AddValue(graph->mutable_output(), "f8")->mutable_type()->mutable_tensor_type()->set_elem_type(17);

  ScopedTempDir dir;
  WriteModel(model, dir.path() / "types.onnx");
  Result<ModelSummary> summary = SummarizeOnnxModel(dir.path() / "types.onnx");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const Signature& signature = summary->signature;
  EXPECT_EQ(signature.inputs[0].dtype, DType::kString);
  EXPECT_EQ(signature.inputs[0].type_name, "string");
  EXPECT_FALSE(signature.inputs[0].has_shape);
  const std::vector<std::string> expected = {
      "float32",   "seq(tensor(float))", "optional(tensor(float))", "map(int64,tensor(float))",
      "complex64", "float8e4m3fn"};
  ASSERT_EQ(signature.outputs.size(), expected.size());
  for (size_t output_idx = 0; output_idx < expected.size(); ++output_idx) {
    EXPECT_EQ(signature.outputs[output_idx].type_name, expected[output_idx]);
    EXPECT_EQ(signature.outputs[output_idx].dtype.has_value(), output_idx == 0);
  }
}

TEST(SummarizeOnnxModel, CountsRawTypedAndExternalInitializerBytes) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float x) => (float y) { y = Identity(x) }
)");
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::TensorProto* raw = graph->add_initializer();  // fp16[3] in raw_data: 6 bytes
  raw->set_name("raw");
  raw->set_data_type(onnx::TensorProto::FLOAT16);
  raw->add_dims(3);
  raw->set_raw_data(std::string(6, '\0'));
  onnx::TensorProto* typed = graph->add_initializer();  // fp16[2, 2] in int32_data: 8 bytes
  typed->set_name("typed");
  typed->set_data_type(onnx::TensorProto::FLOAT16);
  typed->add_dims(2);
  typed->add_dims(2);
  for (int value_idx = 0; value_idx < 4; ++value_idx) typed->add_int32_data(0);
  onnx::TensorProto* external = graph->add_initializer();  // float[10, 10] in a side file
  external->set_name("external");
  external->set_data_type(onnx::TensorProto::FLOAT);
  external->add_dims(10);
  external->add_dims(10);
  external->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = external->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  onnx::StringStringEntryProto* length = external->add_external_data();
  length->set_key("length");
  length->set_value("400");

  Result<ModelSummary> summary = SummarizeOnnxModelBytes(Serialize(model), "mem.onnx");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->initializer_count, 3);
  EXPECT_EQ(summary->parameter_count, 3 + 4 + 100);
  EXPECT_EQ(summary->initializer_bytes, 6 + 8 + 400);
  EXPECT_TRUE(summary->has_external_data);
  EXPECT_EQ(summary->external_data_files, std::vector<std::string>{"weights.bin"});
  EXPECT_TRUE(summary->sha256.empty());
}

// Found by fuzz/onnx_model_fuzz.cc (regressions/onnx_model/external_data_negative_length.onnx): a
// negative external "length" was summed as is, and the sum overflowed. It counts as the dims say.
TEST(SummarizeOnnxModel, ANegativeExternalLengthCountsAsTheDimsSay) {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float x) => (float y) { y = Identity(x) }
)");
  {
    onnx::TensorProto* external = model.mutable_graph()->add_initializer();  // float[2, 3]
    external->set_name("a");
    external->set_data_type(onnx::TensorProto::FLOAT);
    external->add_dims(2);
    external->add_dims(3);
    external->set_data_location(onnx::TensorProto::EXTERNAL);
    onnx::StringStringEntryProto* location = external->add_external_data();
    location->set_key("location");
    location->set_value("weights.bin");
    onnx::StringStringEntryProto* length = external->add_external_data();
    length->set_key("length");
    length->set_value("-8");
  }
  Result<ModelSummary> summary = SummarizeOnnxModelBytes(Serialize(model), "mem.onnx");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->initializer_bytes, 2 * 3 * 4);
}

TEST(SummarizeOnnxModel, TruncatedFileIsDataLossNamingTheFile) {
  ScopedTempDir dir;
  const std::string bytes = Serialize(ParseOnnxText(kIfModel));
  const std::filesystem::path path = dir.path() / "model.onnx";
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);

  Result<ModelSummary> summary = SummarizeOnnxModel(path);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kDataLoss);
  // The graph field runs past the end of the file: cut short, not some other format.
  const std::string message = Message(summary.status());
  EXPECT_EQ(
      message.rfind(path.string() +
                        ": not a valid ONNX model: the file is truncated: its graph field (at "
                        "byte ",
                    0),
      0u)
      << message;
  EXPECT_NE(message.find("remain"), std::string::npos) << message;
}

TEST(SummarizeOnnxModel, ForeignBytesAreNotCalledTruncated) {
  ScopedTempDir dir;
  std::ofstream(dir.path() / "text.onnx", std::ios::binary) << "hello, this is not a model\n";
  Result<ModelSummary> summary = SummarizeOnnxModel(dir.path() / "text.onnx");
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(Message(summary.status())
                .find("not a valid ONNX model: it does not start like an ONNX model (first bytes "
                      "68 65 6c 6c 6f 2c 20 74 'hello, t')"),
            std::string::npos)
      << Message(summary.status());
  // What run or compare meet when a TorchScript archive is named .onnx.
  std::ofstream(dir.path() / "zip.onnx", std::ios::binary) << "PK\x03\x04 and more";
  summary = SummarizeOnnxModel(dir.path() / "zip.onnx");
  EXPECT_NE(Message(summary.status()).find("it is a zip archive, not an ONNX model"),
            std::string::npos)
      << Message(summary.status());
}

TEST(SummarizeOnnxModel, CountsWeightsInConstantNodesApartFromInitializers) {
  // Every attribute a Constant can hold its tensor in, one in an If branch.
  constexpr char kConstants[] = R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] x, bool c) => (float[2] y, int64[3] z)
  <float[2] w = {1.0, 2.0}>
{
  t = Constant <value = float[2, 3] {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}> ()
  f = Constant <value_float = 0.5> ()
  fs = Constant <value_floats = [1.0, 2.0, 3.0]> ()
  is = Constant <value_ints = [1, 2, 3]> ()
  y = Add (x, w)
  z = If (c) <then_branch = g1 () => (int64[3] a) { a = Constant <value_ints = [4, 5, 6]> () },
              else_branch = g2 () => (int64[3] b) { b = Identity (is) }>
}
)";
  Result<ModelSummary> summary =
      SummarizeOnnxModelBytes(Serialize(ParseOnnxText(kConstants)), "constants.onnx");
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->initializer_count, 1);
  EXPECT_EQ(summary->initializer_parameters, 2);
  EXPECT_EQ(summary->initializer_bytes, 8);
  EXPECT_EQ(summary->constant_node_count, 5);
  EXPECT_EQ(summary->constant_node_parameters, 6 + 1 + 3 + 3 + 3);
  EXPECT_EQ(summary->constant_node_bytes, 24 + 4 + 12 + 24 + 24);
  EXPECT_EQ(summary->parameter_count, 2 + 16);
  EXPECT_EQ(summary->parameter_bytes, 8 + 88);
}

TEST(SummarizeOnnxModel, EmptyOrForeignFileIsDataLoss) {
  ScopedTempDir dir;
  std::ofstream(dir.path() / "empty.onnx", std::ios::binary).flush();
  std::ofstream(dir.path() / "text.onnx", std::ios::binary) << "hello, this is not a model\n";
  for (const char* name : {"empty.onnx", "text.onnx"}) {
    Result<ModelSummary> summary = SummarizeOnnxModel(dir.path() / name);
    ASSERT_FALSE(summary.ok()) << name;
    EXPECT_EQ(summary.status().code(), StatusCode::kDataLoss) << name;
    EXPECT_NE(Message(summary.status()).find(name), std::string::npos)
        << summary.status().ToString();
  }
}

TEST(SummarizeOnnxModel, MissingFileIsNotFound) {
  Result<ModelSummary> summary = SummarizeOnnxModel("/nonexistent/convgate/model.onnx");
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kNotFound);
}

// SummarizeOnnxModelFile parses as it reads; it must say exactly what the bytes' summary says,
// and fail exactly as it does (its failures are diagnosed from the bytes).
TEST(SummarizeOnnxModelFile, SummarizesAsTheBytesDo) {
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "if.onnx";
  WriteModel(ParseOnnxText(kIfModel), path);
  Result<ModelSummary> streamed = SummarizeOnnxModelFile(path);
  Result<ModelSummary> whole = SummarizeOnnxModelBytes(*ReadFile(path), path);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(streamed->file_bytes, whole->file_bytes);
  EXPECT_EQ(streamed->opsets.size(), whole->opsets.size());
  EXPECT_EQ(streamed->op_histogram, whole->op_histogram);
  EXPECT_EQ(streamed->initializer_bytes, whole->initializer_bytes);
  EXPECT_EQ(streamed->signature.inputs.size(), whole->signature.inputs.size());
  EXPECT_EQ(streamed->signature.outputs.size(), whole->signature.outputs.size());
  EXPECT_TRUE(streamed->sha256.empty());
}

TEST(SummarizeOnnxModelFile, FailsAsTheBytesDo) {
  ScopedTempDir dir;
  const std::string bytes = Serialize(ParseOnnxText(kIfModel));
  std::ofstream(dir.path() / "cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(dir.path() / "empty.onnx", std::ios::binary).flush();
  std::ofstream(dir.path() / "zip.onnx", std::ios::binary) << "PK\x03\x04 and more";
  for (const char* name : {"cut.onnx", "empty.onnx", "zip.onnx"}) {
    const std::filesystem::path path = dir.path() / name;
    Result<ModelSummary> streamed = SummarizeOnnxModelFile(path);
    Result<ModelSummary> whole = SummarizeOnnxModel(path);
    ASSERT_FALSE(streamed.ok()) << name;
    EXPECT_EQ(streamed.status().ToString(), whole.status().ToString()) << name;
  }
  Result<ModelSummary> missing = SummarizeOnnxModelFile(dir.path() / "missing.onnx");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  Result<ModelSummary> folder = SummarizeOnnxModelFile(dir.path());
  EXPECT_FALSE(folder.ok());
}

// The structure summary skips the initializers' data as it reads, and says the rest as the file's
// summary does; files it cannot follow fail as they do there.
TEST(SummarizeOnnxModelStructure, SkipsOnlyTheInitializersData) {
  ScopedTempDir dir;
  const std::filesystem::path path = dir.path() / "weighted.onnx";
  WriteModel(ParseOnnxText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 2] x) => (float[1, 2] y)
    <float[2] w = {1.0, 2.0}>
    {
      y = Add(x, w)
    }
  )"),
             path);
  Result<ModelSummary> structure = SummarizeOnnxModelStructure(path);
  Result<ModelSummary> file = SummarizeOnnxModelFile(path);
  ASSERT_TRUE(structure.ok()) << structure.status().ToString();
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(structure->file_bytes, file->file_bytes);
  EXPECT_EQ(structure->op_histogram, file->op_histogram);
  EXPECT_EQ(structure->initializer_count, file->initializer_count);
  EXPECT_EQ(structure->initializer_parameters, file->initializer_parameters);
  EXPECT_EQ(structure->has_external_data, file->has_external_data);
  ASSERT_EQ(structure->signature.inputs.size(), 1u);
  EXPECT_EQ(structure->signature.inputs[0].name, "x");  // w is an initializer, not an input
  ASSERT_EQ(structure->signature.outputs.size(), 1u);
  EXPECT_EQ(structure->signature.outputs[0].name, file->signature.outputs[0].name);
  // Without the data, the bytes come from the dims and the element type: the same here.
  EXPECT_EQ(structure->initializer_bytes, file->initializer_bytes);
}

TEST(SummarizeOnnxModelStructure, FailsAsTheFileDoes) {
  ScopedTempDir dir;
  const std::string bytes = Serialize(ParseOnnxText(kIfModel));
  std::ofstream(dir.path() / "cut.onnx", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(dir.path() / "empty.onnx", std::ios::binary).flush();
  std::ofstream(dir.path() / "zip.onnx", std::ios::binary) << "PK\x03\x04 and more";
  for (const char* name : {"cut.onnx", "empty.onnx", "zip.onnx", "missing.onnx"}) {
    const std::filesystem::path path = dir.path() / name;
    Result<ModelSummary> structure = SummarizeOnnxModelStructure(path);
    Result<ModelSummary> file = SummarizeOnnxModelFile(path);
    ASSERT_FALSE(structure.ok()) << name;
    EXPECT_EQ(structure.status().ToString(), file.status().ToString()) << name;
  }
}

}  // namespace
}  // namespace convgate::graph
