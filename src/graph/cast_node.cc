#include "convgate/graph/internal/cast_node.h"

namespace convgate::graph {

onnx::NodeProto MakeCast(const std::string& input, const std::string& output, int to,
                         const std::string& name) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(name);
  cast.add_input(input);
  cast.add_output(output);
  onnx::AttributeProto* attr = cast.add_attribute();
  attr->set_name("to");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(to);
  return cast;
}

}  // namespace convgate::graph
