#include "backends/openvino/ov_common.h"

#include <sstream>

namespace convgate::backends {

ov::Core& SharedCore() {
  static ov::Core* core = new ov::Core();  // never destroyed: plugins outlive static teardown
  return *core;
}

std::string CleanMessage(const std::string& what) {
  std::istringstream in(what);
  std::vector<std::string> all, kept;
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    all.push_back(line);
    const bool location =
        line.starts_with("Exception from src/") ||
        (line.starts_with("Check '") && line.find(" failed at src/") != std::string::npos);
    if (!location) kept.push_back(line);
  }
  std::string joined;
  for (const std::string& line : kept.empty() ? all : kept) {
    joined += (joined.empty() ? "" : " ") + line;
  }
  return joined;
}

Result<std::shared_ptr<ov::Model>> ReadOpenVinoModel(const std::filesystem::path& path) {
  try {
    return SharedCore().read_model(path.string());
  } catch (const std::exception& e) {
    const std::string message = CleanMessage(e.what());
    const std::string text = path.string() + ": OpenVINO cannot read the model: " + message;
    // An operator OpenVINO cannot convert, rather than a file it cannot parse.
    const bool unsupported = message.find("No conversion rule") != std::string::npos ||
                             message.find("OpConversionFailure") != std::string::npos ||
                             message.find("is not supported") != std::string::npos;
    return unsupported ? Status::Unimplemented(text) : Status::DataLoss(text);
  }
}

namespace {

struct ElementPair {
  ov::element::Type_t element;
  DType dtype;
};

constexpr ElementPair kElements[] = {
    {ov::element::Type_t::f32, DType::kFloat32},  {ov::element::Type_t::f64, DType::kFloat64},
    {ov::element::Type_t::f16, DType::kFloat16},  {ov::element::Type_t::bf16, DType::kBFloat16},
    {ov::element::Type_t::i8, DType::kInt8},      {ov::element::Type_t::i16, DType::kInt16},
    {ov::element::Type_t::i32, DType::kInt32},    {ov::element::Type_t::i64, DType::kInt64},
    {ov::element::Type_t::u8, DType::kUInt8},     {ov::element::Type_t::u16, DType::kUInt16},
    {ov::element::Type_t::u32, DType::kUInt32},   {ov::element::Type_t::u64, DType::kUInt64},
    {ov::element::Type_t::boolean, DType::kBool}, {ov::element::Type_t::string, DType::kString},
};

TensorInfo DescribePort(const ov::Output<const ov::Node>& port, size_t index, bool input) {
  TensorInfo info;
  info.name = PortName(port, index, input);
  info.dtype = ElementDType(port.get_element_type());
  info.type_name =
      info.dtype ? std::string(DTypeName(*info.dtype)) : ElementTypeName(port.get_element_type());
  const ov::PartialShape& shape = port.get_partial_shape();
  info.has_shape = shape.rank().is_static();
  if (info.has_shape) {
    for (const ov::Dimension& dim : shape) {
      info.shape.push_back(dim.is_static() ? Dim::Fixed(dim.get_length()) : Dim::Unknown());
    }
  }
  return info;
}

}  // namespace

std::optional<DType> ElementDType(const ov::element::Type& type) {
  for (const ElementPair& pair : kElements) {
    if (pair.element == type) return pair.dtype;
  }
  return std::nullopt;
}

ov::element::Type DTypeElement(DType dtype) {
  for (const ElementPair& pair : kElements) {
    if (pair.dtype == dtype) return pair.element;
  }
  return ov::element::Type_t::dynamic;
}

std::string ElementTypeName(const ov::element::Type& type) { return type.get_type_name(); }

std::string PortName(const ov::Output<const ov::Node>& port, size_t index, bool input) {
  const std::unordered_set<std::string>& names = port.get_names();
  const std::string& friendly = port.get_node()->get_friendly_name();
  if (input && names.count(friendly) > 0) return friendly;
  if (!names.empty()) return port.get_any_name();
  if (!friendly.empty()) return friendly;
  return (input ? "input_" : "output_") + std::to_string(index);
}

Signature DescribeModel(const ov::Model& model) {
  Signature signature;
  const std::vector<ov::Output<const ov::Node>> inputs = model.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    signature.inputs.push_back(DescribePort(inputs[i], i, true));
  }
  const std::vector<ov::Output<const ov::Node>> outputs = model.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    signature.outputs.push_back(DescribePort(outputs[i], i, false));
  }
  return signature;
}

}  // namespace convgate::backends
