// SummarizeOnnxModel: what `inspect` shows about an ONNX file.
#include "convgate/graph/onnx_model.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <utility>

#include "convgate/core/file_util.h"
#include "convgate/core/numbers.h"
#include "convgate/graph/internal/bfloat16_emulation.h"
#include "convgate/graph/internal/model_proto.h"
#include "graph/config_hints.h"
#include "graph/input_hints.h"
#include "graph/onnx_types.h"

namespace convgate::graph {
namespace {

std::string OpKey(const onnx::NodeProto& node) {
  if (IsDefaultDomain(node)) return node.op_type();
  return node.domain() + "." + node.op_type();
}

int64_t ElementCount(const onnx::TensorProto& tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0) return 0;  // invalid; the checker reports it, the summary just does not count it
    count = SaturatingMul(count, dim);
  }
  return count;
}

// Bytes the elements of `tensor` occupy, wherever they are stored.
int64_t StoredBytes(const onnx::TensorProto& tensor, int64_t elements) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
      if (entry.key() != "length") continue;
      // A malformed or negative length: fall back to the size the dims imply.
      try {
        const int64_t length = std::stoll(entry.value());
        if (length >= 0) return length;
      } catch (const std::exception&) {
      }
      break;
    }
  } else if (tensor.has_raw_data()) {
    return static_cast<int64_t>(tensor.raw_data().size());
  } else if (tensor.data_type() == onnx::TensorProto::STRING) {
    int64_t bytes = 0;
    for (const std::string& value : tensor.string_data()) {
      bytes = SaturatingAdd(bytes, static_cast<int64_t>(value.size()));
    }
    return bytes;
  }
  // Typed fields (float_data, int32_data for fp16, ...) are counted at the element type's own
  // size, which is what the tensor takes in memory, not the wider protobuf field.
  const int64_t total_bits = SaturatingMul(elements, OnnxElemTypeBits(tensor.data_type()));
  return total_bits / 8 + (total_bits % 8 != 0 ? 1 : 0);
}

void AddExternalFile(const onnx::TensorProto& tensor, ModelSummary* summary) {
  summary->has_external_data = true;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() != "location") continue;
    std::vector<std::string>& files = summary->external_data_files;
    auto position = std::lower_bound(files.begin(), files.end(), entry.value());
    if (position == files.end() || *position != entry.value())
      files.insert(position, entry.value());
  }
}

void AddInitializer(const onnx::TensorProto& tensor, ModelSummary* summary) {
  const int64_t elements = ElementCount(tensor);
  const int64_t bytes = StoredBytes(tensor, elements);
  ++summary->initializer_count;
  summary->initializer_parameters = SaturatingAdd(summary->initializer_parameters, elements);
  summary->initializer_bytes = SaturatingAdd(summary->initializer_bytes, bytes);
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) AddExternalFile(tensor, summary);
}

int64_t StringBytes(const google::protobuf::RepeatedPtrField<std::string>& strings) {
  int64_t bytes = 0;
  for (const std::string& value : strings) {
    bytes = SaturatingAdd(bytes, static_cast<int64_t>(value.size()));
  }
  return bytes;
}

// Elements and bytes of the tensor a Constant node's attribute holds; {0, 0} for attributes that
// hold none.
std::pair<int64_t, int64_t> ConstantAttributeSize(const onnx::AttributeProto& attr) {
  if (attr.name() == "value" && attr.has_t()) {
    const int64_t elements = ElementCount(attr.t());
    return {elements, StoredBytes(attr.t(), elements)};
  }
  if (attr.name() == "sparse_value" && attr.has_sparse_tensor()) {
    const onnx::TensorProto& values = attr.sparse_tensor().values();
    const onnx::TensorProto& indices = attr.sparse_tensor().indices();
    const int64_t elements = ElementCount(values);
    return {elements, SaturatingAdd(StoredBytes(values, elements),
                                    StoredBytes(indices, ElementCount(indices)))};
  }
  if (attr.name() == "value_float") return {1, 4};
  if (attr.name() == "value_int") return {1, 8};
  if (attr.name() == "value_floats") return {attr.floats_size(), attr.floats_size() * 4};
  if (attr.name() == "value_ints") return {attr.ints_size(), attr.ints_size() * 8};
  if (attr.name() == "value_string") return {1, static_cast<int64_t>(attr.s().size())};
  if (attr.name() == "value_strings") return {attr.strings_size(), StringBytes(attr.strings())};
  return {0, 0};
}

void AddConstantNode(const onnx::NodeProto& node, ModelSummary* summary) {
  ++summary->constant_node_count;
  for (const onnx::AttributeProto& attr : node.attribute()) {
    const auto [elements, bytes] = ConstantAttributeSize(attr);
    summary->constant_node_parameters = SaturatingAdd(summary->constant_node_parameters, elements);
    summary->constant_node_bytes = SaturatingAdd(summary->constant_node_bytes, bytes);
  }
}

bool IsConstantNode(const onnx::NodeProto& node) {
  return node.op_type() == "Constant" && IsDefaultDomain(node);
}

// Counts nodes, initializers and Constant nodes of `graph` and, recursively, of the subgraphs in
// node attributes (If branches, Loop and Scan bodies, and GRAPHS attributes of custom ops).
void CountGraph(const onnx::GraphProto& graph, ModelSummary* summary) {
  for (const onnx::TensorProto& tensor : graph.initializer()) AddInitializer(tensor, summary);
  for (const onnx::NodeProto& node : graph.node()) {
    ++summary->node_count;
    ++summary->op_histogram[OpKey(node)];
    if (IsConstantNode(node)) AddConstantNode(node, summary);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g()) CountGraph(attribute.g(), summary);
      for (const onnx::GraphProto& subgraph : attribute.graphs()) CountGraph(subgraph, summary);
    }
  }
}

Signature GraphSignature(const onnx::GraphProto& graph) {
  // Before IR version 4 every initializer was also listed as a graph input; those are weights
  // with a default, not inputs a caller has to feed.
  std::set<std::string> initializer_names;
  for (const onnx::TensorProto& tensor : graph.initializer())
    initializer_names.insert(tensor.name());
  Signature signature;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializer_names.count(input.name()) != 0) continue;
    signature.inputs.push_back(TensorInfoFromValueInfo(input));
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    signature.outputs.push_back(TensorInfoFromValueInfo(output));
  }
  return signature;
}

ModelSummary Summarize(const onnx::ModelProto& model, int64_t file_bytes,
                       const std::filesystem::path& path) {
  ModelSummary summary;
  summary.path = path;
  summary.file_bytes = file_bytes;
  summary.ir_version = model.ir_version();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    summary.opsets.push_back(OpsetImport{opset.domain(), opset.version()});
  }
  summary.producer_name = model.producer_name();
  summary.producer_version = model.producer_version();
  summary.graph_name = model.graph().name();
  summary.signature = GraphSignature(model.graph());
  AddInputHints(model.graph(), summary.signature);
  if (!path.empty()) AddConfigHints(path.parent_path(), summary.signature);
  CountGraph(model.graph(), &summary);
  summary.uses_bfloat16 = UsesBfloat16(model.graph());
  summary.parameter_count =
      SaturatingAdd(summary.initializer_parameters, summary.constant_node_parameters);
  summary.parameter_bytes = SaturatingAdd(summary.initializer_bytes, summary.constant_node_bytes);
  return summary;
}

}  // namespace

Result<ModelSummary> SummarizeOnnxModelBytes(std::string_view model_bytes,
                                             const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProto(model_bytes, path));
  return Summarize(model, static_cast<int64_t>(model_bytes.size()), path);
}

Result<ModelSummary> SummarizeOnnxModelFile(const std::filesystem::path& path) {
  int64_t file_bytes = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelProtoFile(path, &file_bytes));
  return Summarize(model, file_bytes, path);
}

Result<ModelSummary> SummarizeOnnxModelStructure(const std::filesystem::path& path) {
  int64_t file_bytes = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelStructureFile(path, &file_bytes));
  return Summarize(model, file_bytes, path);
}

Result<std::string> ReadModelStructureBytes(const std::filesystem::path& path) {
  int64_t file_bytes = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelStructureFile(path, &file_bytes));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Status::Unimplemented(path.string() + ": the model's structure is over protobuf's 2 GB");
  }
  return bytes;
}

Result<ModelSummary> SummarizeOnnxModel(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  CONVGATE_ASSIGN_OR_RETURN(ModelSummary summary, SummarizeOnnxModelBytes(bytes, path));
  summary.sha256 = Sha256Hex(bytes);
  return summary;
}

}  // namespace convgate::graph
