// Turning OpenCV's multi-line error text into one sentence (no OpenCV headers needed).
#pragma once

#include <string>
#include <string_view>

namespace convgate::backends {

// One line from a cv::Exception's what(): the "OpenCV(4.6.0) file:line: error: (-2:Unspecified
// error)" locations and "in function '...'" suffixes dropped (they point into OpenCV's sources,
// not the model), the "> " nesting of rethrown errors flattened, an assertion kept as
// "assertion failed: <expression>", and the result cut to at most ~400 characters. E.g.
// mobilenet_v2 at opset 13 gives "Node
// [Clip@ai.onnx]:(onnx_node!/features/features.0/features.0.2/Clip) parse error: (expected:
// 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3 must be equal to '1' is 1".
std::string CleanOpenCvMessage(std::string_view what);

}  // namespace convgate::backends
