#include "convgate/gate/pair_policy.h"

#include <string>

#include "convgate/core/numbers.h"
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

// The network-level bfloat16 profile: examples/policies/bf16-network.yaml's figures. bfloat16
// keeps 8 significant bits (unit roundoff 2^-8, 8x float16's), so a network rounds every
// activation 8x coarser than the float16 profile allows for. Measured with `--to bf16` (run
// emulated: float32 compute, every bfloat16 value rounded as stored) on torchvision resnet18 and
// mobilenet_v2 (8 samples; at opset 17 their Convs have no bfloat16 form and stay float32, the
// adds, clips and classifier are bfloat16) and on the zoo's BERT export (every MatMul bfloat16):
// docs/policy.md, "bfloat16 tolerances".
compare::ConversionDefaults Bfloat16Network(std::string origin) {
  compare::ConversionDefaults defaults;
  defaults.settings.atol = kBfloat16NetworkAtol;
  defaults.settings.rtol = kBfloat16NetworkRtol;
  defaults.settings.min_cosine = kBfloat16NetworkMinCosine;
  defaults.settings.min_snr_db = kBfloat16NetworkMinSnrDb;
  defaults.origin = std::move(origin);
  return defaults;
}

// The weight-compression profiles (docs/policy.md, "Compressed weights"). int8 and int4 weights
// change every logit a little by design, so the elementwise tolerance is counted and reported but
// does not gate; what gates is what a user of the compressed model sees: the shape of the
// outputs (cosine, SNR), the generated tokens and the first step's top-1 (verify adds that
// --agreement check). Measured on the tiny Hugging Face zoo (random weights, hidden size 32, so
// harsher than trained models): int8 exports keep cosine >= 0.9998 and SNR >= 34 dB with every
// token equal; int4 (group size 32) 0.9985-0.9994 and 25-29 dB on the decoders, t5's 0.974 and
// 12.7 dB (which fails: say so rather than pass it); weights perturbed by 30% noise fall to
// 0.85-0.90 and 3-7 dB. The token_ids and text names are the hf backend's generation outputs.
compare::ConversionDefaults WeightCompression(const std::string& format) {
  const bool int4 = format == "int4";
  compare::ConversionDefaults defaults;
  defaults.settings.mismatch_ppm = 1e6;
  defaults.settings.min_cosine = int4 ? 0.98 : 0.999;
  defaults.settings.min_snr_db = int4 ? 15.0 : 25.0;
  // Greedy decoding diverges for good after one near-tie flips, at int8 as at int4 (a random
  // OPT's int8 export kept the first 10 of 13 ids, then took the runner-up): at least half the
  // ids (prompt included) must still agree, the first step's top-1 must too (verify), and the
  // text, which differs as soon as one token does, is only reported.
  defaults.per_output["token_ids"].mismatch_ppm = 5e5;
  defaults.per_output["text"].mismatch_ppm = 1e6;
  return defaults;
}

// The quantization profile (docs/policy.md, "Quantized models"): int8 moves every activation by
// design, so elementwise differences are counted and reported but do not gate; what gates is the
// shape of each floating output (cosine, SNR) and, for classifier outputs, the top-1 prediction
// (verify adds a --agreement check on each). The floors are measured (bench/quantize.sh): ONNX
// Runtime's int8 of tinycnn and of torchvision resnet18 and mobilenet_v2 (random weights, random
// inputs: harsher than a trained model on real data) keep cosine >= 0.99 and SNR >= 20 dB; a
// corrupted scale or weight falls far below.
// `verified`: verify converted it and adds the top-1 check on each classifier output; a pair
// recognised from its graphs (compare) gets top-1 checks only when --agreement asks.
compare::ConversionDefaults Quantization(const std::string& why, bool verified) {
  compare::ConversionDefaults defaults;
  defaults.settings.mismatch_ppm = 1e6;
  defaults.settings.min_cosine = kQuantizedMinCosine;
  defaults.settings.min_snr_db = kQuantizedMinSnrDb;
  const std::string top1 = FormatShortest(kQuantizedMinTop1 * 100) + "% of rows";
  defaults.origin = "quantization profile " + why +
                    ": floating outputs by cosine >= " + FormatShortest(kQuantizedMinCosine) +
                    " and SNR >= " + FormatShortest(kQuantizedMinSnrDb) +
                    " dB, elementwise differences counted, not gating; " +
                    (verified ? "classifier outputs' top-1 must agree on " + top1
                              : "add --agreement OUTPUT:top1>=0.99 to gate a classifier's top-1") +
                    " (docs/policy.md)";
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

// The profile's rules in words, from its own numbers, for the report's policy line.
std::string WeightCompressionOrigin(const PairFacts& facts, const std::string& format,
                                    const compare::ConversionDefaults& profile) {
  std::string origin = "weight-compression profile of --to " + facts.conversion->kind + " (" +
                       format + " weights" + (FellBack(facts.record) ? ", the fallback" : "") +
                       "): floating outputs by cosine >= " +
                       FormatShortest(profile.settings.min_cosine.value_or(0.0)) +
                       " and SNR >= " + FormatShortest(profile.settings.min_snr_db.value_or(0.0)) +
                       " dB, elementwise differences counted, not gating; token_ids at least 50% "
                       "equal, text reported; the first step's top-1 must agree (docs/policy.md)";
  return origin;
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

// A target computing in float16 or bfloat16 from a source that does not: the pair adds that
// format's rounding.
std::optional<compare::ConversionDefaults> FromGraphs(const PairFacts& facts) {
  const std::optional<graph::ComputePrecision> target = PrecisionOf(facts.target);
  const bool quantizes = target && target->quantization_ops > 0;
  // A float32 target (most pairs) decides alone: the source is read only when there is a
  // reduced precision to compare it with.
  if (!target || (!quantizes && !target->Reduced())) return std::nullopt;
  const std::optional<graph::ComputePrecision> source = PrecisionOf(facts.source);
  if (quantizes && (!source || source->quantization_ops == 0)) {
    return Quantization("(the target quantizes: " + std::to_string(target->quantization_ops) +
                            " quantization ops, the source none)",
                        false);
  }
  if (!target->Reduced()) return std::nullopt;
  const DType reduced = *target->Reduced();
  if (source && source->Reduced() == reduced) return std::nullopt;
  if (reduced == DType::kBFloat16) {
    return Bfloat16Network("network-level bfloat16 default: the target computes in bfloat16 (" +
                           target->Describe() + "; examples/policies/bf16-network.yaml)");
  }
  if (reduced != DType::kFloat16) return std::nullopt;
  return Float16Network("network-level float16 default: the target computes in float16 (" +
                        target->Describe() + "; examples/policies/fp16-network.yaml)");
}

}  // namespace

bool IsQuantizedKind(const std::string& kind) {
  return kind == "int8-dynamic" || kind == "int8-static" || kind == "openvino:int8";
}

// "int8" or "int4" when the conversion stores compressed weights: asked for, or the int4
// fallback taken after the fp16 export ran out of memory or time.
std::string CompressedWeightFormat(const PairFacts& facts) {
  if (facts.conversion == nullptr || facts.conversion->kind.empty()) return "";
  if (FellBack(facts.record)) return "int4";
  if (facts.conversion->kind != "optimum-openvino") return "";
  auto format = facts.conversion->params.find("weight_format");
  if (format == facts.conversion->params.end()) return "";
  return format->second == "int8" || format->second == "int4" ? format->second : "";
}

std::optional<compare::ConversionDefaults> DecidePairPolicy(const PairFacts& facts) {
  const bool converted = facts.conversion != nullptr && !facts.conversion->kind.empty();
  if (converted) {
    if (IsQuantizedKind(facts.conversion->kind)) {
      return Quantization("of --to " + facts.conversion->kind, true);
    }
    const std::string format = CompressedWeightFormat(facts);
    if (!format.empty()) {
      compare::ConversionDefaults profile = WeightCompression(format);
      profile.origin = WeightCompressionOrigin(facts, format, profile);
      return profile;
    }
    if (facts.conversion->kind == "bf16") {
      return Bfloat16Network("network-level bfloat16 default of --to " + facts.conversion->kind +
                             " (bfloat16 network; examples/policies/bf16-network.yaml)");
    }
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
