#include "transform/models.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "convert/convert_test_util.h"
#include "convgate/io/tensor_proto.h"

namespace convgate::testing {
namespace {

std::string Header(int opset) {
  return "<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) + "]>\n";
}

}  // namespace

std::string ConvBatchNormModel(float epsilon) {
  return Header(17) +
         "g (float[1,3,6,6] x) => (float[1,4,6,6] y)\n"
         "<float[4,3,3,3] w = " +
         FloatLiteral(108, -0.5f, 0.5f, 1) + ", float[4] b = " + FloatLiteral(4, -0.2f, 0.2f, 2) +
         ", float[4] scale = " + FloatLiteral(4, 0.5f, 1.5f, 3) +
         ", float[4] beta = " + FloatLiteral(4, -0.5f, 0.5f, 4) +
         ", float[4] mean = " + FloatLiteral(4, -0.3f, 0.3f, 5) +
         ", float[4] var = " + FloatLiteral(4, 0.05f, 0.3f, 6) +
         ">\n{\n"
         "  c = Conv <pads = [1, 1, 1, 1]> (x, w, b)\n"
         "  n = BatchNormalization <epsilon = " +
         std::to_string(epsilon) +
         "> (c, scale, beta, mean, var)\n"
         "  y = Relu (n)\n}\n";
}

std::string MatMulAddModel() {
  return Header(17) +
         "g (float[2,4] x, float[2,2,4] x3) => (float[2,3] y, float[2,2,3] z)\n"
         "<float[4,3] w = " +
         FloatLiteral(12, -1.0f, 1.0f, 7) + ", float[3] b = " + FloatLiteral(3, -1.0f, 1.0f, 8) +
         ">\n{\n"
         "  m = MatMul (x, w)\n"
         "  a = Add (m, b)\n"
         "  y = Relu (a)\n"
         "  m3 = MatMul (x3, w)\n"
         "  z = Add (m3, b)\n}\n";
}

std::string DivModel() {
  return Header(17) +
         "g (float[2,3] x) => (float[2,3] y, float[2,3] z, float[2,3] w)\n"
         "<float[3] c1 = {3.0, 7.0, 0.3}, float[3] zeros = {1.0, 0.0, 2.0}>\n{\n"
         "  c2 = Constant <value = float[1] {6.0}> ()\n"
         "  y = Div (x, c1)\n"
         "  z = Div (x, c2)\n"
         "  w = Div (x, zeros)\n}\n";
}

std::string ConstantChainModel() {
  return Header(17) +
         "g (float[2,3] x) => (float[2,3] y)\n"
         "<float[3] c1 = {1.0, 2.0, 3.0}, float[2,3] c2 = " +
         FloatLiteral(6, -1.0f, 1.0f, 9) +
         ">\n{\n"
         "  c3 = Constant <value = float[1] {0.5}> ()\n"
         "  s = Add (c1, c2)\n"
         "  t = Mul (s, c3)\n"
         "  y = Add (x, t)\n}\n";
}

std::string IdentityModel() {
  return Header(17) +
         "g (float[2,3] x) => (float[2,3] y, float[2,3] z)\n{\n"
         "  i1 = Identity (x)\n"
         "  r = Relu (i1)\n"
         "  d = Dropout (r)\n"
         "  y = Identity (d)\n"
         "  z = Identity (x)\n}\n";
}

std::string ParallelMatMulModel(int opset) {
  return Header(opset) +
         "g (float[2,4] x) => (float[2,3] y1, float[2,5] y2, float[2,2] y3)\n"
         "<float[4,3] w1 = " +
         FloatLiteral(12, -1.0f, 1.0f, 10) +
         ", float[4,5] w2 = " + FloatLiteral(20, -1.0f, 1.0f, 11) +
         ", float[4,2] w3 = " + FloatLiteral(8, -1.0f, 1.0f, 12) +
         ">\n{\n"
         "  m1 = MatMul (x, w1)\n"
         "  y1 = Relu (m1)\n"
         "  m2 = MatMul (x, w2)\n"
         "  y2 = Sigmoid (m2)\n"
         "  y3 = MatMul (x, w3)\n}\n";
}

std::string UnfoldableBatchNormModel() {
  const std::string stats = "scale, beta, mean, var";
  return Header(15) +
         "g (float[1,3,6,6] x, float[1] one) => (float[1,4,6,6] y1, float[1,4,6,6] y2, "
         "float[1,4,6,6] y3, float[1,4,6,6] c3, float[1,4,6,6] y4)\n"
         "<float[4,3,3,3] w = " +
         FloatLiteral(108, -0.5f, 0.5f, 1) +
         ", float[4] scale = " + FloatLiteral(4, 0.5f, 1.5f, 3) +
         ", float[4] beta = " + FloatLiteral(4, -0.5f, 0.5f, 4) +
         ", float[4] mean = " + FloatLiteral(4, -0.3f, 0.3f, 5) +
         ", float[4] var = " + FloatLiteral(4, 0.05f, 0.3f, 6) +
         ">\n{\n"
         "  c1 = Conv <pads = [1, 1, 1, 1]> (x, w)\n"
         "  r1 = Relu (c1)\n"
         "  y1 = BatchNormalization (r1, " +
         stats +
         ")\n"
         "  c2 = Conv <pads = [1, 1, 1, 1]> (x, w)\n"
         "  y2, m2, v2 = BatchNormalization <training_mode = 1> (c2, " +
         stats +
         ")\n"
         "  c3 = Conv <pads = [1, 1, 1, 1]> (x, w)\n"
         "  y3 = BatchNormalization (c3, " +
         stats +
         ")\n"
         "  wc = Mul (w, one)\n"
         "  c4 = Conv <pads = [1, 1, 1, 1]> (x, wc)\n"
         "  y4 = BatchNormalization (c4, " +
         stats + ")\n}\n";
}

onnx::ModelProto WeightsAsConstantNodes(onnx::ModelProto model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const onnx::TensorProto& init : graph.initializer()) {
    onnx::NodeProto* constant = nodes.Add();
    constant->set_op_type("Constant");
    constant->set_name("Constant_" + init.name());
    constant->add_output(init.name());
    onnx::AttributeProto* value = constant->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    // Exporters write raw_data: round-trip through convgate's reader and writer to get it.
    Result<io::NamedTensorProto> tensor =
        io::ParseTensorProto(init.SerializeAsString(), "initializer '" + init.name() + "'");
    EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
    if (tensor.ok()) {
      value->mutable_t()->ParseFromString(io::SerializeTensorProto(tensor->tensor, init.name()));
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) *nodes.Add() = std::move(node);
  graph.mutable_node()->Swap(&nodes);
  graph.clear_initializer();
  return model;
}

onnx::ModelProto WeightsThroughIdentity(onnx::ModelProto model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  std::unordered_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const onnx::TensorProto& init : graph.initializer()) {
    onnx::NodeProto* identity = nodes.Add();
    identity->set_op_type("Identity");
    identity->set_name("Identity_" + init.name());
    identity->add_input(init.name());
    identity->add_output(init.name() + "_identity");
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (std::string& input : *node.mutable_input()) {
      if (initializers.count(input) != 0) input += "_identity";
    }
    *nodes.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&nodes);
  return model;
}

}  // namespace convgate::testing
