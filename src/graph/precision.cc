#include "convgate/graph/precision.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>
#include <string_view>

#include "convgate/core/file_util.h"
#include "convgate/graph/internal/model_proto.h"
#include "convgate/graph/openvino_ir.h"

namespace convgate::graph {
namespace {

// Counts saturate: a hostile model's dims may multiply past int64 (the counts only decide which
// dtype most weights have, so a saturated count still decides right).
constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max() / 4;

int64_t SaturatingMultiply(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > kMaxCount) return kMaxCount;
  return product;
}

void SaturatingAdd(int64_t& total, int64_t elements) {
  total = std::min(kMaxCount, total + std::min(kMaxCount, elements));
}

void AddWeights(int32_t data_type, int64_t elements, ComputePrecision& precision) {
  switch (data_type) {
    case onnx::TensorProto::FLOAT:
      SaturatingAdd(precision.float32_weights, elements);
      break;
    case onnx::TensorProto::FLOAT16:
      SaturatingAdd(precision.float16_weights, elements);
      break;
    case onnx::TensorProto::BFLOAT16:
      SaturatingAdd(precision.bfloat16_weights, elements);
      break;
    default:
      break;
  }
}

int64_t ElementsOf(const onnx::TensorProto& tensor) {
  int64_t elements = 1;
  for (int64_t dim : tensor.dims()) elements = SaturatingMultiply(elements, dim > 0 ? dim : 0);
  return elements;
}

void AddCast(int64_t to, ComputePrecision& precision) {
  if (to == onnx::TensorProto::FLOAT16) ++precision.casts_to_float16;
  if (to == onnx::TensorProto::BFLOAT16) ++precision.casts_to_bfloat16;
}

ComputePrecision FromOnnx(const onnx::GraphProto& graph) {
  ComputePrecision precision;
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    AddWeights(initializer.data_type(), ElementsOf(initializer), precision);
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (IsQuantizationOp(node.op_type())) ++precision.quantization_ops;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (node.op_type() == "Constant" && attr.has_t()) {
        AddWeights(attr.t().data_type(), ElementsOf(attr.t()), precision);
      }
      if (node.op_type() == "Cast" && attr.name() == "to") AddCast(attr.i(), precision);
    }
  }
  return precision;
}

// The value of `name="..."` inside one tag's text, or "".
std::string_view Attribute(std::string_view tag, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string_view::npos) return {};
  const size_t begin = at + key.size();
  const size_t end = tag.find('"', begin);
  return end == std::string_view::npos ? std::string_view{} : tag.substr(begin, end - begin);
}

int64_t ShapeElements(std::string_view shape) {
  if (shape.empty()) return 1;  // a scalar
  int64_t elements = 1;
  size_t begin = 0;
  while (begin <= shape.size()) {
    const size_t comma = std::min(shape.find(',', begin), shape.size());
    const long long dim = std::atoll(std::string(shape.substr(begin, comma - begin)).c_str());
    elements = SaturatingMultiply(elements, dim > 0 ? dim : 0);
    begin = comma + 1;
  }
  return elements;
}

// Each <layer ... type="Const"> is followed by its <data element_type=... shape=...>; each
// Convert layer by its <data destination_type=...>.
ComputePrecision FromIrText(std::string_view xml) {
  ComputePrecision precision;
  for (size_t at = xml.find("<layer "); at != std::string_view::npos;
       at = xml.find("<layer ", at + 1)) {
    const size_t tag_end = xml.find('>', at);
    if (tag_end == std::string_view::npos) break;
    const std::string_view type = Attribute(xml.substr(at, tag_end - at), "type");
    if (type == "FakeQuantize" || type == "FakeConvert") ++precision.quantization_ops;
    if (type != "Const" && type != "Convert") continue;
    const size_t data = xml.find("<data ", tag_end);
    const size_t next_layer = xml.find("<layer ", tag_end);
    if (data == std::string_view::npos || data > next_layer) continue;
    const std::string_view data_tag = xml.substr(data, xml.find('>', data) - data);
    if (type == "Convert") {
      const std::string_view to = Attribute(data_tag, "destination_type");
      if (to == "f16") ++precision.casts_to_float16;
      if (to == "bf16") ++precision.casts_to_bfloat16;
      continue;
    }
    const std::string_view element = Attribute(data_tag, "element_type");
    const int64_t elements = ShapeElements(Attribute(data_tag, "shape"));
    if (element == "f32") SaturatingAdd(precision.float32_weights, elements);
    if (element == "f16") SaturatingAdd(precision.float16_weights, elements);
    if (element == "bf16") SaturatingAdd(precision.bfloat16_weights, elements);
  }
  return precision;
}

std::string Count(int64_t value) {
  char text[32];
  if (value >= 1000000) {
    std::snprintf(text, sizeof(text), "%.1fM", static_cast<double>(value) / 1e6);
  } else if (value >= 1000) {
    std::snprintf(text, sizeof(text), "%.1fk", static_cast<double>(value) / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(value));
  }
  return text;
}

}  // namespace

std::optional<DType> ComputePrecision::Reduced() const {
  const int64_t total = float32_weights + float16_weights + bfloat16_weights;
  if (total == 0) return std::nullopt;
  if (2 * float16_weights > total) return DType::kFloat16;
  if (2 * bfloat16_weights > total) return DType::kBFloat16;
  return std::nullopt;
}

std::string ComputePrecision::Describe() const {
  const int64_t total = float32_weights + float16_weights + bfloat16_weights;
  const bool bf16 = bfloat16_weights > float16_weights;
  const int64_t reduced = bf16 ? bfloat16_weights : float16_weights;
  const char* name = bf16 ? "bfloat16" : "float16";
  char percent[16];
  std::snprintf(percent, sizeof(percent), "%.0f%%",
                total > 0 ? 100.0 * static_cast<double>(reduced) / static_cast<double>(total) : 0);
  const int64_t casts = bf16 ? casts_to_bfloat16 : casts_to_float16;
  return std::string(percent) + " of " + Count(total) + " floating weights are " + name + ", " +
         std::to_string(casts) + (casts == 1 ? " cast" : " casts") + " to " + name;
}

bool IsQuantizationOp(std::string_view op_type) {
  static const std::set<std::string_view> kOps = {"QuantizeLinear",
                                                  "DequantizeLinear",
                                                  "DynamicQuantizeLinear",
                                                  "MatMulInteger",
                                                  "ConvInteger",
                                                  "QLinearConv",
                                                  "QLinearMatMul",
                                                  "QLinearAdd",
                                                  "QLinearMul",
                                                  "QLinearConcat",
                                                  "QLinearGlobalAveragePool",
                                                  "QLinearSigmoid",
                                                  "QLinearLeakyRelu",
                                                  "QLinearAveragePool",
                                                  "QLinearSoftmax",
                                                  "DynamicQuantizeMatMul",
                                                  "MatMulIntegerToFloat",
                                                  "QGemm",
                                                  "QAttention"};
  const size_t dot = op_type.rfind('.');  // "com.microsoft.QLinearAdd"
  return kOps.count(dot == std::string_view::npos ? op_type : op_type.substr(dot + 1)) != 0;
}

ComputePrecision IrComputePrecision(std::string_view xml) { return FromIrText(xml); }

Result<ComputePrecision> ReadComputePrecision(const std::filesystem::path& path) {
  if (IsOpenVinoIr(path)) {
    CONVGATE_ASSIGN_OR_RETURN(std::string xml, ReadFile(path));
    return IrComputePrecision(xml);
  }
  int64_t size = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, ParseModelStructureFile(path, &size));
  return FromOnnx(model.graph());
}

}  // namespace convgate::graph
