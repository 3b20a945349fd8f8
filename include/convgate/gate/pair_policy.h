// The one decision of which defaults a source/target pair is judged under (docs/policy.md, "The
// policy of a pair"): every command that compares a target with its source (compare, verify,
// pipeline, compare --feedback, batch through them, check through the report it re-judges) calls
// it, so the same conversion is never judged by two policies.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "convgate/compare/policy.h"
#include "convgate/convert/convert.h"

namespace convgate::gate {

// What is known of how the target came from the source.
struct PairFacts {
  // When convgate converted it (verify --to, pipeline --to): the request and, once it ran, its
  // record (whose notes say when it fell back to another path).
  const convert::ConversionRequest* conversion = nullptr;
  const convert::ConversionRecord* record = nullptr;
  // The two files (ONNX models or OpenVINO IR .xml), read when no conversion says what the
  // target computes in. Empty, or saved outputs: nothing to read.
  std::filesystem::path source;
  std::filesystem::path target;
};

// The conversion defaults the pair gets, below the user's settings and above the per-dtype
// defaults (compare::Policy::conversion_defaults), or nullopt for none:
//   - a conversion to float16 (fp16, openvino:fp16, optimum-openvino at its default fp16 weights)
//     gets the network-level float16 profile (examples/policies/fp16-network.yaml), measured on
//     torchvision networks: no deep network meets single-rounding tolerances after a float16
//     conversion;
//   - a conversion to bfloat16 (bf16) gets the network-level bfloat16 profile
//     (examples/policies/bf16-network.yaml, the kBfloat16Network* constants);
//   - without a conversion (or after an external one), a target whose floating weights are mostly
//     float16 or bfloat16 (graph/precision.h) from a source whose are not gets that format's
//     profile, its origin saying what was detected;
//   - int8 and int4 weights (optimum-openvino's weight_format, or its int4 fallback) get the
//     weight-compression profile: floating outputs by cosine and SNR floors with elementwise
//     differences reported, not gating; generated token ids exact (int8) or at least half equal
//     (int4). verify adds the first step's top-1 agreement (CompressedWeightFormat);
//   - int8 quantization (int8-dynamic, int8-static) gets the quantization profile: cosine and
//     SNR floors, elementwise differences reported; verify adds a top-1 agreement check on each
//     classifier output (kQuantizedMinTop1).
std::optional<compare::ConversionDefaults> DecidePairPolicy(const PairFacts& facts);

// The network-level bfloat16 profile (measured: pair_policy.cc, docs/policy.md "bfloat16
// tolerances"): the worst of the measured faithful conversions with the float16 profile's
// margins (atol 1.6x the largest error, 1 - cosine 10x, SNR 10 dB).
inline constexpr double kBfloat16NetworkAtol = 0.1;
inline constexpr double kBfloat16NetworkRtol = 0.04;
inline constexpr double kBfloat16NetworkMinCosine = 0.99;
inline constexpr double kBfloat16NetworkMinSnrDb = 18.0;

// The quantization profile's floors (measured: pair_policy.cc).
inline constexpr double kQuantizedMinCosine = 0.99;
inline constexpr double kQuantizedMinSnrDb = 20.0;
inline constexpr double kQuantizedMinTop1 = 0.99;

// Whether `kind` quantizes to int8 (the quantization profile).
bool IsQuantizedKind(const std::string& kind);

// "int8" or "int4" when the pair is judged under the weight-compression profile, else "".
std::string CompressedWeightFormat(const PairFacts& facts);

// Sets policy.conversion_defaults from DecidePairPolicy unless something already set them (a
// policy read back from a report, or a caller that decided).
void ApplyPairPolicy(const PairFacts& facts, compare::Policy& policy);

}  // namespace convgate::gate
