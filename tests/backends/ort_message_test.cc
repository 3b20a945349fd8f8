#include "backends/onnxruntime/ort_message.h"

#include <gtest/gtest.h>

namespace convgate::backends {
namespace {

#if CONVGATE_WITH_ONNXRUNTIME

// Messages as ONNX Runtime 1.29's official Linux build formats them.
TEST(CleanOrtMessage, DropsSourceLocationsAndCodePrefix) {
  EXPECT_EQ(CleanOrtMessage(
                "Non-zero status code returned while running Reshape node. Name:'reshape_node' "
                "Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/"
                "reshape_helper.h:91 onnxruntime::ReshapeHelper::ReshapeHelper(const "
                "onnxruntime::TensorShape&, onnxruntime::TensorShapeVector&, bool) "
                "input_shape_size == requested_shape_size was false. The input tensor cannot be "
                "reshaped to the requested shape. Input shape:{2,3}, requested shape:{4,5}\n"),
            "Non-zero status code returned while running Reshape node. Name:'reshape_node' "
            "Status Message: input_shape_size == requested_shape_size was false. The input "
            "tensor cannot be reshaped to the requested shape. Input shape:{2,3}, requested "
            "shape:{4,5}");
  EXPECT_EQ(CleanOrtMessage("/onnxruntime_src/onnxruntime/core/graph/graph.cc:1421 "
                            "onnxruntime::Graph::Graph(const onnxruntime::Model&, "
                            "onnx::GraphProto*, const std::unordered_map<std::__cxx11::basic_"
                            "string<char>, int>&, bool) [ONNXRuntimeError] : 1 : FAIL : Output:w "
                            "[ShapeInferenceError] Mismatch between number of inferred and "
                            "declared dimensions. inferred=1 declared=2\n"),
            "Output:w [ShapeInferenceError] Mismatch between number of inferred and declared "
            "dimensions. inferred=1 declared=2");
  EXPECT_EQ(CleanOrtMessage("/src/session.cc:12 onnxruntime::common::Status "
                            "onnxruntime::Load(int) const [with T = float] bad model"),
            "bad model");
}

TEST(CleanOrtMessage, KeepsPlainText) {
  EXPECT_EQ(CleanOrtMessage("Invalid model (see docs.cc:3 for more). Node input 'z' missing"),
            "Invalid model (see docs.cc:3 for more). Node input 'z' missing");
  EXPECT_EQ(CleanOrtMessage(""), "");
}

#endif  // CONVGATE_WITH_ONNXRUNTIME

}  // namespace
}  // namespace convgate::backends
