// Small helpers for building ONNX models from code (the example/test model tools): value types
// with fixed or symbolic dims, float initializers, nodes and attributes. Header-only because
// each tool is a single translation unit.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace convgate::tools {

// One declared dimension: a fixed size, or a symbol when `symbol` is non-null.
struct DimSpec {
  int64_t value;
  const char* symbol;
};

inline void SetType(onnx::ValueInfoProto* info, const std::string& name, int elem_type,
                    const std::vector<DimSpec>& dims) {
  info->set_name(name);
  auto* tensor_type = info->mutable_type()->mutable_tensor_type();
  tensor_type->set_elem_type(elem_type);
  auto* shape = tensor_type->mutable_shape();
  for (const DimSpec& dim : dims) {
    auto* d = shape->add_dim();
    if (dim.symbol != nullptr) {
      d->set_dim_param(dim.symbol);
    } else {
      d->set_dim_value(dim.value);
    }
  }
}

inline void AddFloatInitializer(onnx::GraphProto* graph, const std::string& name,
                                const std::vector<int64_t>& dims,
                                const std::vector<float>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->add_dims(d);
  tensor->set_raw_data(values.data(), values.size() * sizeof(float));
}

inline void AddInt64Initializer(onnx::GraphProto* graph, const std::string& name,
                                const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& values) {
  auto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) tensor->add_dims(d);
  for (int64_t v : values) tensor->add_int64_data(v);
}

// The node is named "<op>_<first output>", unique as long as output names are.
inline onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(op + "_" + outputs.front());
  for (const auto& in : inputs) node->add_input(in);
  for (const auto& out : outputs) node->add_output(out);
  return node;
}

inline void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

inline void SetInts(onnx::NodeProto* node, const std::string& name,
                    const std::vector<int64_t>& values) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

inline void SetFloat(onnx::NodeProto* node, const std::string& name, float value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

// An empty model at opset 13 (IR 7, the IR version that pairs with it).
inline onnx::ModelProto NewModel(const std::string& producer, const std::string& graph_name) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.set_producer_name(producer);
  model.set_producer_version("1");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  model.mutable_graph()->set_name(graph_name);
  return model;
}

inline bool WriteModel(const std::filesystem::path& path, const onnx::ModelProto& model) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  return out && model.SerializeToOstream(&out);
}

}  // namespace convgate::tools
