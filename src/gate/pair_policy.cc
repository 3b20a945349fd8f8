#include "convgate/gate/pair_policy.h"

#include <string>

#include "convgate/graph/openvino_ir.h"
#include "convgate/graph/precision.h"

namespace convgate::gate {
namespace {

// The network-level float16 profile: examples/policies/fp16-network.yaml's figures, measured on
// torchvision resnet18 and mobilenet_v2 converted with `--to fp16` (every layer in float16). It
// also judges OpenVINO's float16 weights, which the CPU plugin computes in float32 and so meets
// with room to spare. A broken conversion still fails: an overflow is introduced Inf whatever the
// tolerance, and the cosine and SNR floors catch errors inside the band.
compare::ConversionDefaults Float16Network(std::string origin) {
  compare::ConversionDefaults defaults;
  defaults.settings.atol = 4e-2;
  defaults.settings.rtol = 1e-2;
  defaults.settings.min_cosine = 0.9995;
  defaults.settings.min_snr_db = 30.0;
  defaults.origin = std::move(origin);
  return defaults;
}

bool FellBack(const convert::ConversionRecord* record) {
  if (record == nullptr) return false;
  for (const std::string& note : record->notes) {
    if (note.rfind(convert::kFallbackNotePrefix, 0) == 0) return true;
  }
  return false;
}

// "fp16" and "openvino:fp16" compute (or store weights) in float16; optimum-openvino does at its
// default weight format.
std::string WeightsDescription(const convert::ConversionRequest& request) {
  if (request.kind == "fp16") return "float16 network";
  if (request.kind == "openvino:fp16") return "float16 weights";
  if (request.kind == "optimum-openvino") {
    auto format = request.params.find("weight_format");
    if (format == request.params.end() || format->second == "fp16") return "float16 weights";
  }
  return "";
}

// What a model file computes in, when it is a file graph/precision.h reads.
std::optional<graph::ComputePrecision> PrecisionOf(const std::filesystem::path& path) {
  std::error_code error;
  if (path.empty() || !std::filesystem::is_regular_file(path, error)) return std::nullopt;
  if (path.extension() != ".onnx" && !graph::IsOpenVinoIr(path)) return std::nullopt;
  Result<graph::ComputePrecision> precision = graph::ReadComputePrecision(path);
  if (!precision.ok()) return std::nullopt;
  return *precision;
}

// A target computing in float16 from a source that does not: the pair adds float16's rounding.
std::optional<compare::ConversionDefaults> FromGraphs(const PairFacts& facts) {
  const std::optional<graph::ComputePrecision> target = PrecisionOf(facts.target);
  if (!target || target->Reduced() != DType::kFloat16) return std::nullopt;
  const std::optional<graph::ComputePrecision> source = PrecisionOf(facts.source);
  if (source && source->Reduced() == DType::kFloat16) return std::nullopt;
  return Float16Network("network-level float16 default: the target computes in float16 (" +
                        target->Describe() + "; examples/policies/fp16-network.yaml)");
}

}  // namespace

std::optional<compare::ConversionDefaults> DecidePairPolicy(const PairFacts& facts) {
  const bool converted = facts.conversion != nullptr && !facts.conversion->kind.empty();
  if (converted) {
    if (FellBack(facts.record)) return std::nullopt;  // int4 weights: no measured profile
    const std::string weights = WeightsDescription(*facts.conversion);
    if (!weights.empty()) {
      return Float16Network("network-level float16 default of --to " + facts.conversion->kind +
                            " (" + weights + "; examples/policies/fp16-network.yaml)");
    }
    // convgate's own conversions say what they compute in; an external one may not.
    if (facts.conversion->kind != "external") return std::nullopt;
  }
  return FromGraphs(facts);
}

void ApplyPairPolicy(const PairFacts& facts, compare::Policy& policy) {
  if (policy.conversion_defaults) return;
  policy.conversion_defaults = DecidePairPolicy(facts);
}

}  // namespace convgate::gate
