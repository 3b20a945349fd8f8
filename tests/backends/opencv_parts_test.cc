// The OpenCV-free parts of the "opencv" backend: error text, layer names, output shapes.
#include <gtest/gtest.h>

#if CONVGATE_WITH_OPENCV
#include "backends/opencv/opencv_layers.h"
#include "backends/opencv/opencv_message.h"
#include "backends/opencv/output_dims.h"
#endif

namespace convgate::backends {
namespace {

#if CONVGATE_WITH_OPENCV

// Verbatim what() of OpenCV 4.6.0 on torchvision's mobilenet_v2 exported at opset 13.
constexpr char kMobileNetWhat[] =
    "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1040: error: (-2:Unspecified error) "
    "in function 'handleNode'\n"
    "> Node [Clip@ai.onnx]:(onnx_node!/features/features.0/features.0.2/Clip) parse error: "
    "OpenCV(4.6.0) ./modules/dnn/src/onnx/onnx_importer.cpp:1934: error: (-2:Unspecified error) "
    "in function 'void cv::dnn::dnn4_v20220524::ONNXImporter::parseClip(cv::dnn::dnn4_v20220524::"
    "LayerParams&, const opencv_onnx::NodeProto&)'\n"
    "> >  (expected: 'node_proto.input_size() == 1'), where\n"
    "> >     'node_proto.input_size()' is 3\n"
    "> > must be equal to\n"
    "> >     '1' is 1\n";

TEST(CleanOpenCvMessage, FlattensNestedErrorsAndDropsSourceLocations) {
  EXPECT_EQ(CleanOpenCvMessage(kMobileNetWhat),
            "Node [Clip@ai.onnx]:(onnx_node!/features/features.0/features.0.2/Clip) parse error: "
            "(expected: 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3 must "
            "be equal to '1' is 1");
}

TEST(CleanOpenCvMessage, KeepsTheMessageOfASimpleErrorAndMarksAssertions) {
  EXPECT_EQ(CleanOpenCvMessage("OpenCV(4.6.0) ./modules/dnn/src/net_impl.cpp:1333: error: "
                               "(-204:Requested object was not found) Requested blob not found in "
                               "function 'getBlob'\n"),
            "Requested blob not found");
  EXPECT_EQ(CleanOpenCvMessage("OpenCV(4.6.0) /x/onnx_importer.cpp:214: error: (-215:Assertion "
                               "failed) model_proto.has_graph() in function 'ONNXImporter'\n"),
            "assertion failed: model_proto.has_graph()");
  EXPECT_EQ(CleanOpenCvMessage("plain text"), "plain text");
  EXPECT_LE(CleanOpenCvMessage(std::string(5000, 'x')).size(), 410u);
}

std::vector<graph::NodeInfo> Nodes() {
  return {{"Conv_0", "Conv", {"c"}},
          {"", "Relu", {"r"}},
          {"split", "Split", {"a", "b"}},
          {"", "TopK", {"", "idx"}}};
}

TEST(OpenCvLayerNames, NamedNodesUseTheNodeNameUnnamedOnesTheirFirstOutput) {
  OpenCvLayerNames names(Nodes());
  EXPECT_EQ(*names.CandidatesFor("c"), (std::vector<std::string>{"onnx_node!Conv_0", "Conv_0"}));
  EXPECT_EQ(*names.CandidatesFor("r"), (std::vector<std::string>{"onnx_node_output_0!r", "r"}));
  EXPECT_EQ(*names.CandidatesFor("a"), (std::vector<std::string>{"onnx_node!split", "split"}));
  // An omitted first output: OpenCV names the layer after the first one present.
  EXPECT_EQ(*names.CandidatesFor("idx"),
            (std::vector<std::string>{"onnx_node_output_1!idx", "idx"}));
}

TEST(OpenCvLayerNames, OtherOutputsAreUnimplementedAndUnknownNamesNotFound) {
  OpenCvLayerNames names(Nodes());
  Result<std::vector<std::string>> second = names.CandidatesFor("b");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(second.status().message().find("node 'split' (Split)"), std::string::npos);
  Result<std::vector<std::string>> unknown = names.CandidatesFor("nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
}

TensorInfo Declared(std::vector<Dim> dims) {
  TensorInfo info;
  info.name = "out";
  info.dtype = DType::kFloat32;
  info.type_name = "float32";
  info.has_shape = true;
  info.shape = std::move(dims);
  return info;
}

TEST(OutputDims, DeclaredShapeWinsWhenItHoldsTheElements) {
  const SymbolValues batch4 = {{"batch", 4}};
  // A 1-D result that OpenCV returned as 10 x 1.
  const TensorInfo vector10 = Declared({Dim::Fixed(10)});
  EXPECT_EQ(OutputDims(&vector10, {10, 1}, {}), (std::vector<int64_t>{10}));
  // Symbols bound by the inputs.
  const TensorInfo logits = Declared({Dim::Symbolic("batch"), Dim::Fixed(10)});
  EXPECT_EQ(OutputDims(&logits, {4, 10}, batch4), (std::vector<int64_t>{4, 10}));
  EXPECT_EQ(OutputDims(&logits, {40}, batch4), (std::vector<int64_t>{4, 10}));
  // One unknown dim solved from the element count.
  const TensorInfo unknown = Declared({Dim::Unknown(), Dim::Fixed(5)});
  EXPECT_EQ(OutputDims(&unknown, {15}, {}), (std::vector<int64_t>{3, 5}));
  // A scalar.
  const TensorInfo scalar = Declared({});
  EXPECT_EQ(OutputDims(&scalar, {1, 1}, {}), (std::vector<int64_t>{}));
}

TEST(OutputDims, MatDimsStayWhenTheDeclarationDoesNotFit) {
  // tinycnn_badshape declares [batch, 12] for a [1, 10] result: the mismatch must show.
  const TensorInfo lying = Declared({Dim::Symbolic("batch"), Dim::Fixed(12)});
  EXPECT_EQ(OutputDims(&lying, {1, 10}, {{"batch", 1}}), (std::vector<int64_t>{1, 10}));
  const TensorInfo two_unknown = Declared({Dim::Unknown(), Dim::Unknown()});
  EXPECT_EQ(OutputDims(&two_unknown, {6}, {}), (std::vector<int64_t>{6}));
  EXPECT_EQ(OutputDims(nullptr, {2, 3}, {}), (std::vector<int64_t>{2, 3}));
}

#else

TEST(OpenCvParts, Skipped) {
  GTEST_SKIP() << "built without OpenCV DNN (CONVGATE_WITH_OPENCV=OFF)";
}

#endif

}  // namespace
}  // namespace convgate::backends
