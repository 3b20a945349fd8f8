// graph::ListOpenVinoIrNodes on hand-written IR XML: which layers are nodes, which tensor names
// their ports carry, which tensors feed them, and that what is not an IR is DataLoss naming it.
#include "convgate/graph/openvino_ir.h"

#include <gtest/gtest.h>

namespace convgate::graph {
namespace {

// input -> Convolution (port named by ONNX) -> Add (two names, one with an escaped comma) ->
// Relu (unnamed output) -> Result, with a Const weight and a TensorIterator whose body's layers
// must not be listed.
constexpr char kIr[] = R"(<?xml version="1.0"?>
<!-- a comment with <layer id="99"> inside -->
<net name="m" version="11">
  <layers>
    <layer id="0" name="input" type="Parameter" version="opset1">
      <data shape="?,3" element_type="f32" />
      <output><port id="0" precision="FP32" names="input"><dim>-1</dim></port></output>
    </layer>
    <layer id="1" name="w" type="Const" version="opset1">
      <output><port id="0" precision="FP32" names="conv.weight"/></output>
    </layer>
    <layer id="2" name="/conv/Conv" type="Convolution" version="opset1">
      <input><port id="0"/><port id="1"/></input>
      <output><port id="2" precision="FP32" names="/conv/Conv_output_0"/></output>
    </layer>
    <layer id="3" name="/add&amp;1" type="Add" version="opset1">
      <input><port id="0"/><port id="1"/></input>
      <output><port id="2" names="/add_output_0,a\,b"/></output>
    </layer>
    <layer id="4" name="relu" type="ReLU" version="opset1">
      <input><port id="0"/></input>
      <output><port id="1"/></output>
    </layer>
    <layer id="5" name="loop" type="TensorIterator" version="opset1">
      <input><port id="0"/></input>
      <output><port id="1" names="loop_out"/></output>
      <body>
        <layers>
          <layer id="0" name="inner" type="Sigmoid" version="opset1">
            <output><port id="1" names="inner_out"/></output>
          </layer>
        </layers>
        <edges/>
      </body>
    </layer>
    <layer id="6" name="out" type="Result" version="opset1">
      <input><port id="0"/></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0" />
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1" />
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0" />
    <edge from-layer="0" from-port="0" to-layer="3" to-port="1" />
    <edge from-layer="3" from-port="2" to-layer="4" to-port="0" />
    <edge from-layer="4" from-port="1" to-layer="5" to-port="0" />
    <edge from-layer="5" from-port="1" to-layer="6" to-port="0" />
  </edges>
</net>
)";

TEST(OpenVinoIrTest, ListsComputingLayersWithTheirTensorNames) {
  Result<std::vector<NodeInfo>> nodes = ListOpenVinoIrNodes(kIr, "m.xml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 4u);
  const NodeInfo& conv = (*nodes)[0];
  EXPECT_EQ(conv.name, "/conv/Conv");
  EXPECT_EQ(conv.op_type, "Convolution");
  EXPECT_EQ(conv.outputs, std::vector<std::string>({"/conv/Conv_output_0"}));
  EXPECT_EQ(conv.inputs, std::vector<std::string>({"input", "conv.weight"}));
  const NodeInfo& add = (*nodes)[1];
  EXPECT_EQ(add.name, "/add&1");
  EXPECT_EQ(add.outputs, std::vector<std::string>({"/add_output_0", "a,b"}));
  EXPECT_EQ(add.inputs, std::vector<std::string>({"/conv/Conv_output_0", "input"}));
  const NodeInfo& relu = (*nodes)[2];
  EXPECT_TRUE(relu.outputs.empty());
  EXPECT_EQ(relu.inputs, std::vector<std::string>({"/add_output_0"}));
  const NodeInfo& loop = (*nodes)[3];
  EXPECT_EQ(loop.name, "loop");  // its body's "inner" is not a node of the main graph
  EXPECT_EQ(loop.inputs, std::vector<std::string>({""}));  // relu's output has no name
}

TEST(OpenVinoIrTest, WhatIsNotAnIrIsDataLossNamingTheFile) {
  for (const char* text :
       {"", "\x08\x07onnx bytes", "<model><layers/></model>",
        "<net><layers><layer id=\"0\" name=x></layers></net>", "<net><layers></net>",
        "<net><layers><layer id=\"0\" type=\"Relu\"/></layers>",
        "<net><layers><layer id=\"0\" type=\"Relu\"/></layers>"
        "<edges><edge from-layer=\"7\" from-port=\"0\" to-layer=\"0\" "
        "to-port=\"0\"/></edges></net>"}) {
    Result<std::vector<NodeInfo>> nodes = ListOpenVinoIrNodes(text, "bad.xml");
    ASSERT_FALSE(nodes.ok()) << text;
    EXPECT_EQ(nodes.status().code(), StatusCode::kDataLoss) << text;
    EXPECT_NE(nodes.status().message().find("bad.xml: not an OpenVINO IR"), std::string::npos)
        << nodes.status().ToString();
  }
  EXPECT_TRUE(IsOpenVinoIr("a/model.xml"));
  EXPECT_FALSE(IsOpenVinoIr("a/model.onnx"));
}

// What OpenVINO up to 2022 wrote on every layer: rt_info fused_names ("a, b" or "a,b"), and an
// execution graph's originalLayersNames (in <data>). A port's rt_info is not the layer's.
TEST(OpenVinoIrTest, ReadsTheSourceNodesALayerFused) {
  constexpr char kFused[] = R"(<net name="m" version="11"><layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <rt_info><attribute name="fused_names" version="0" value="x"/></rt_info>
      <output><port id="0" names="x"/></output>
    </layer>
    <layer id="1" name="conv" type="Convolution" version="opset1">
      <rt_info>
        <attribute name="fused_names" version="0" value="Conv_0, BatchNormalization_1"/>
        <attribute name="PrimitivesPriority" version="0" value="cpu:gemm"/>
      </rt_info>
      <input><port id="0"/></input>
      <output><port id="1" names="conv">
        <rt_info><attribute name="fused_names" version="0" value="not_the_layer"/></rt_info>
      </port></output>
    </layer>
    <layer id="2" name="relu" type="Eltwise" version="opset1">
      <data originalLayersNames="Relu_2,Clip_3" />
      <input><port id="0"/></input>
      <output><port id="1" names="relu"/></output>
    </layer>
    <layer id="3" name="sig" type="Sigmoid" version="opset1">
      <input><port id="0"/></input>
      <output><port id="1" names="sig"/></output>
    </layer>
  </layers><edges>
    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>
    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>
    <edge from-layer="2" from-port="1" to-layer="3" to-port="0"/>
  </edges></net>)";
  Result<std::vector<NodeInfo>> nodes = ListOpenVinoIrNodes(kFused, "fused.xml");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].fused, std::vector<std::string>({"Conv_0", "BatchNormalization_1"}));
  EXPECT_EQ((*nodes)[1].fused, std::vector<std::string>({"Relu_2", "Clip_3"}));
  EXPECT_TRUE((*nodes)[2].fused.empty());
}

}  // namespace
}  // namespace convgate::graph
