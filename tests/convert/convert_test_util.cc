#include "convert/convert_test_util.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "convgate/backends/registry.h"
#include "convgate/core/float16.h"

namespace convgate::testing {
namespace {

// A tiny fixed generator (tests depend on determinism, not on the values).
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : state_(seed * 2654435761u + 1u) {}
  float Next() {
    state_ = state_ * 1664525u + 1013904223u;
    return static_cast<float>(state_ >> 8) / static_cast<float>(1u << 24);
  }

 private:
  uint32_t state_;
};

std::vector<float> AsFloats(const Tensor& tensor) {
  std::vector<float> values;
  if (tensor.dtype() == DType::kFloat32) {
    auto span = tensor.data<float>();
    values.assign(span.begin(), span.end());
  } else if (tensor.dtype() == DType::kFloat16) {
    for (uint16_t bits : tensor.data<uint16_t>()) values.push_back(HalfToFloat(bits));
  }
  return values;
}

}  // namespace

std::string FloatLiteral(int count, float low, float high, uint32_t seed) {
  Lcg rng(seed);
  std::string text = "{";
  for (int idx = 0; idx < count; ++idx) {
    char value[32];
    std::snprintf(value, sizeof(value), "%.4f", low + (high - low) * rng.Next());
    text += (idx == 0 ? "" : ", ") + std::string(value);
  }
  return text + "}";
}

Result<TensorMap> RunInOrt(const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> ort, backends::CreateBackend("ort"));
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<backends::Model> model, ort->Load(path, {}));
  TensorMap inputs;
  Lcg rng(7);
  for (const TensorInfo& input : model->signature().inputs) {
    std::vector<int64_t> dims;
    for (const Dim& dim : input.shape) dims.push_back(dim.is_fixed() ? dim.value : 1);
    CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
    std::vector<float> values(static_cast<size_t>(shape.NumElements()));
    for (float& value : values) value = 0.1f + rng.Next();
    CONVGATE_RETURN_IF_ERROR(
        inputs.Insert(input.name, Tensor::FromVector(DType::kFloat32, shape, values)));
  }
  return model->Run(inputs, {});
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  const std::vector<float> left = AsFloats(a), right = AsFloats(b);
  if (left.size() != right.size() || a.shape().dims() != b.shape().dims()) {
    return std::numeric_limits<double>::infinity();
  }
  double worst = 0.0;
  for (size_t idx = 0; idx < left.size(); ++idx) {
    worst = std::max(worst, std::fabs(static_cast<double>(left[idx]) - right[idx]));
  }
  return worst;
}

int ElemTypeOf(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto* values : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& info : *values) {
      if (info.name() == name) return info.type().tensor_type().elem_type();
    }
  }
  return 0;
}

}  // namespace convgate::testing
