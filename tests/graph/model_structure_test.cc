// Reading a model's structure without its weights, and getting the weights back: read from the
// file into a tensor (RestoreTensorData), or referenced there as external data
// (ReferenceTensorData), as the node cutter and ORT's marked sessions use them.
#include <gtest/gtest.h>

#include <fstream>

#include "convgate/core/file_util.h"
#include "convgate/graph/internal/model_proto.h"
#include "convgate/graph/node_model.h"
#include "convgate/graph/onnx_model.h"
#include "graph/onnx_test_util.h"

namespace convgate::graph {
namespace {

using ::convgate::testing::ParseOnnxText;
using ::convgate::testing::ScopedTempDir;
using ::convgate::testing::Serialize;

constexpr int kWeightElements = 600;  // 2400 bytes as float32, over the 1 KiB kept inline

// y = ((x + raw) * packed) + small, with `raw` in raw_data, `packed` in float_data, `small` kept
// inline (16 bytes), and two unused initializers in encodings that are not raw bytes (int64
// varints, strings).
onnx::ModelProto WeightsModel() {
  onnx::ModelProto model = ParseOnnxText(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[600] x) => (float[600] y)
{
  a = Add(x, raw)
  b = Mul(a, packed)
  y = Add(b, small)
}
)");
  onnx::GraphProto& graph = *model.mutable_graph();
  auto add = [&](const std::string& name, int32_t type, int64_t dim) -> onnx::TensorProto& {
    onnx::TensorProto& tensor = *graph.add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(type);
    tensor.add_dims(dim);
    return tensor;
  };
  std::string raw(kWeightElements * sizeof(float), '\0');
  for (int idx = 0; idx < kWeightElements; ++idx) {
    const float value = 0.5f * static_cast<float>(idx);
    std::memcpy(raw.data() + idx * sizeof(float), &value, sizeof(float));
  }
  add("raw", onnx::TensorProto::FLOAT, kWeightElements).set_raw_data(raw);
  onnx::TensorProto& packed = add("packed", onnx::TensorProto::FLOAT, kWeightElements);
  for (int idx = 0; idx < kWeightElements; ++idx) packed.add_float_data(1.0f + idx);
  onnx::TensorProto& small = add("small", onnx::TensorProto::FLOAT, 4);
  for (int idx = 0; idx < 4; ++idx) small.add_float_data(2.0f);
  onnx::TensorProto& varints = add("varints", onnx::TensorProto::INT64, 300);
  for (int idx = 0; idx < 300; ++idx) varints.add_int64_data(int64_t{1} << 40 | idx);
  // Short strings around a long one: each is a field of its own, and they must come back in order.
  onnx::TensorProto& strings = add("strings", onnx::TensorProto::STRING, 100);
  for (int idx = 0; idx < 100; ++idx) {
    strings.add_string_data(idx == 50 ? std::string(3000, 'x') : "value " + std::to_string(idx));
  }
  return model;
}

struct WeightsFile {
  ScopedTempDir dir;
  std::filesystem::path path = dir.path() / "weights.onnx";
  onnx::ModelProto model = WeightsModel();
  WeightsFile() { ::convgate::testing::WriteModel(model, path); }
};

const onnx::TensorProto& Named(const onnx::GraphProto& graph, const std::string& name) {
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (tensor.name() == name) return tensor;
  }
  ADD_FAILURE() << "no initializer " << name;
  return graph.initializer(0);
}

TEST(ReadModelStructure, SkipsWeightDataAndKeepsSmallTensors) {
  WeightsFile file;
  Result<ModelStructure> structure = ReadModelStructure(file.path);
  ASSERT_TRUE(structure.ok()) << structure.status().ToString();
  const onnx::GraphProto& graph = structure->model.graph();
  ASSERT_EQ(structure->skipped.size(), 5u);
  EXPECT_EQ(structure->file_size, static_cast<int64_t>(std::filesystem::file_size(file.path)));
  EXPECT_FALSE(Named(graph, "raw").has_raw_data());
  EXPECT_EQ(Named(graph, "packed").float_data_size(), 0);
  EXPECT_EQ(Named(graph, "small").float_data_size(), 4);  // what shape inference may need
  EXPECT_EQ(Named(graph, "varints").int64_data_size(), 0);
  EXPECT_EQ(Named(graph, "strings").string_data_size(), 0);  // all of them, or their order goes
  EXPECT_EQ(Named(graph, "raw").dims(0), kWeightElements);   // everything else is kept
  for (int idx = 0; idx < graph.initializer_size(); ++idx) {
    const std::string& name = graph.initializer(idx).name();
    const bool kept = name == "small";
    EXPECT_EQ(structure->skipped[static_cast<size_t>(idx)].empty(), kept)
        << graph.initializer(idx).name();
  }
}

TEST(RestoreTensorData, GivesBackWhatTheWholeFileHolds) {
  WeightsFile file;
  Result<ModelStructure> structure = ReadModelStructure(file.path);
  ASSERT_TRUE(structure.ok());
  onnx::GraphProto& graph = *structure->model.mutable_graph();
  for (int idx = 0; idx < graph.initializer_size(); ++idx) {
    onnx::TensorProto& tensor = *graph.mutable_initializer(idx);
    ASSERT_TRUE(
        RestoreTensorData(file.path, structure->skipped[static_cast<size_t>(idx)], tensor).ok());
    EXPECT_EQ(tensor.SerializeAsString(),
              Named(file.model.graph(), tensor.name()).SerializeAsString())
        << tensor.name();
  }
}

TEST(RestoreTensorData, AFileThatShrankIsDataLossNamingItAndTheTensor) {
  WeightsFile file;
  Result<ModelStructure> structure = ReadModelStructure(file.path);
  ASSERT_TRUE(structure.ok());
  std::filesystem::resize_file(file.path, 64);
  onnx::TensorProto tensor = Named(structure->model.graph(), "raw");
  Status status = RestoreTensorData(file.path, structure->skipped[0], tensor);
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_NE(status.message().find("weights.onnx"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("'raw'"), std::string::npos) << status.message();
}

// The bytes external data entry `tensor` points at, read from `file`.
std::string ReferencedBytes(const onnx::TensorProto& tensor, const std::filesystem::path& file) {
  int64_t offset = -1, length = -1;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "offset") offset = std::stoll(entry.value());
    if (entry.key() == "length") length = std::stoll(entry.value());
  }
  EXPECT_GE(offset, 0);
  EXPECT_GT(length, 0);
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  std::string bytes(static_cast<size_t>(length), '\0');
  in.read(bytes.data(), length);
  return bytes;
}

TEST(ReferenceTensorData, RawBytesAreReferencedOtherEncodingsCarried) {
  WeightsFile file;
  Result<ModelStructure> structure = ReadModelStructure(file.path);
  ASSERT_TRUE(structure.ok());
  onnx::GraphProto& graph = *structure->model.mutable_graph();
  for (int idx = 0; idx < graph.initializer_size(); ++idx) {
    ASSERT_TRUE(ReferenceTensorData(file.path, "linked.onnx",
                                    structure->skipped[static_cast<size_t>(idx)],
                                    *graph.mutable_initializer(idx))
                    .ok());
  }
  const onnx::TensorProto& raw = Named(graph, "raw");
  ASSERT_EQ(raw.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(raw.external_data(0).key(), "location");
  EXPECT_EQ(raw.external_data(0).value(), "linked.onnx");
  EXPECT_EQ(ReferencedBytes(raw, file.path), Named(file.model.graph(), "raw").raw_data());
  // Packed float_data is the floats' little-endian bytes, which is what external data holds.
  const onnx::TensorProto& packed = Named(graph, "packed");
  ASSERT_EQ(packed.data_location(), onnx::TensorProto::EXTERNAL);
  const std::string packed_bytes = ReferencedBytes(packed, file.path);
  ASSERT_EQ(packed_bytes.size(), kWeightElements * sizeof(float));
  float third = 0;
  std::memcpy(&third, packed_bytes.data() + 2 * sizeof(float), sizeof(float));
  EXPECT_EQ(third, 3.0f);
  for (const char* carried : {"varints", "strings", "small"}) {
    const onnx::TensorProto& tensor = Named(graph, carried);
    EXPECT_NE(tensor.data_location(), onnx::TensorProto::EXTERNAL) << carried;
    EXPECT_EQ(tensor.SerializeAsString(), Named(file.model.graph(), carried).SerializeAsString())
        << carried;
  }
}

TEST(NodeModelCutter, CutsFromTheStructureEqualCutsFromTheWholeModel) {
  WeightsFile file;
  Result<NodeModelCutter> cutter = NodeModelCutter::Open(file.path);
  ASSERT_TRUE(cutter.ok()) << cutter.status().ToString();
  const std::string whole = Serialize(file.model);
  TensorMap feeds;
  ASSERT_TRUE(
      feeds
          .Insert(
              "a",
              std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({kWeightElements}))).value())
          .ok());
  for (size_t node : {size_t{1}}) {
    Result<std::string> from_structure = cutter->Cut({node}, feeds);
    Result<std::string> from_whole = SingleNodeModel(whole, node, feeds, file.path);
    ASSERT_TRUE(from_structure.ok()) << from_structure.status().ToString();
    ASSERT_TRUE(from_whole.ok()) << from_whole.status().ToString();
    EXPECT_EQ(*from_structure, *from_whole);
  }
  // With a weights location the cut references the file rather than carrying the weights.
  Result<std::string> referencing = cutter->Cut({1}, feeds, "target.onnx");
  ASSERT_TRUE(referencing.ok());
  onnx::ModelProto cut;
  ASSERT_TRUE(cut.ParseFromString(*referencing));
  ASSERT_EQ(cut.graph().initializer_size(), 1);
  EXPECT_EQ(cut.graph().initializer(0).name(), "packed");
  EXPECT_EQ(cut.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_LT(referencing->size(), 1024u);
  EXPECT_EQ(cutter->InitializerBytes({1}),
            static_cast<int64_t>(Named(file.model.graph(), "packed").ByteSizeLong()));
}

TEST(WithOutputsReferencingWeights, AddsTheOutputsOfWithOutputsAndReferencesTheWeights) {
  WeightsFile file;
  Result<std::string> marked = WithOutputsReferencingWeights(file.path, {"a", "b"}, "model.onnx");
  ASSERT_TRUE(marked.ok()) << marked.status().ToString();
  Result<std::string> inline_marked = WithOutputs(Serialize(file.model), {"a", "b"}, file.path);
  ASSERT_TRUE(inline_marked.ok());
  onnx::ModelProto referencing, carrying;
  ASSERT_TRUE(referencing.ParseFromString(*marked));
  ASSERT_TRUE(carrying.ParseFromString(*inline_marked));
  ASSERT_EQ(referencing.graph().output_size(), 3);
  for (int idx = 0; idx < 3; ++idx) {
    EXPECT_EQ(referencing.graph().output(idx).SerializeAsString(),
              carrying.graph().output(idx).SerializeAsString());
  }
  EXPECT_EQ(ReferencedBytes(Named(referencing.graph(), "raw"), file.path),
            Named(file.model.graph(), "raw").raw_data());
  // Neither raw nor packed (2400 bytes each) is carried; the strings and varints are.
  EXPECT_LT(marked->size(),
            Serialize(file.model).size() - 2 * kWeightElements * sizeof(float) + 512);
  // Without outputs to add it is the model itself, weights referenced.
  Result<std::string> plain = WithOutputsReferencingWeights(file.path, {}, "model.onnx");
  ASSERT_TRUE(plain.ok());
  onnx::ModelProto unmarked;
  ASSERT_TRUE(unmarked.ParseFromString(*plain));
  EXPECT_EQ(unmarked.graph().output_size(), 1);
}

TEST(ReadModelStructureBytes, NamesAndNodesAreThoseOfTheWholeFile) {
  WeightsFile file;
  Result<std::string> structure = ReadModelStructureBytes(file.path);
  ASSERT_TRUE(structure.ok());
  EXPECT_LT(structure->size(), Serialize(file.model).size() / 2);
  EXPECT_EQ(*IntermediateNames(*structure), *IntermediateNames(Serialize(file.model)));
  Result<std::map<std::string, int64_t>> sizes =
      InferValueBytes(*structure, {{"x", {kWeightElements}}}, file.path);
  ASSERT_TRUE(sizes.ok());
  EXPECT_EQ(sizes->at("b"), kWeightElements * 4);
  // A file that is not a model keeps its diagnosis.
  ASSERT_TRUE(WriteFileAtomic(file.path, "not a model").ok());
  EXPECT_EQ(ReadModelStructureBytes(file.path).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace convgate::graph
