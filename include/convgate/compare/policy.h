// The tolerance policy: for each output, which rules decide pass or fail (docs/policy.md).
// Computing and judging are separate: CompareTensors measures at the elementwise
// tolerance, Judge (judge.h) applies an OutputPolicy to the measurements, and `convgate check`
// re-applies a new policy to a saved report.
//
// Knobs, each global or per output (`NAME:VALUE` on the command line, `outputs:` in a policy file):
//   atol, rtol        the elementwise tolerance |t - s| <= atol + rtol * |s|;
//   check_error_stat  which statistic is held to the tolerance: elementwise (default), max, mean,
//                     median or pNN (Polygraphy's --check-error-stat; "elemwise" is accepted);
//   mismatch_ppm      elements allowed outside the tolerance, per million (bioimage.io's
//                     mismatched_elements_per_million); default 0;
//   min_cosine        cosine similarity floor (optional);
//   min_snr_db        signal-to-noise floor in dB (optional).
// atol and rtol that nobody set come from the per-dtype defaults (DTypeDefaultFor).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/compare/noise_floor.h"
#include "convgate/compare/tolerance.h"
#include "convgate/core/dtype.h"
#include "convgate/core/status.h"

namespace convgate::compare {

enum class ErrorStatKind { kElementwise, kMax, kMean, kMedian, kPercentile };

struct ErrorStat {
  ErrorStatKind kind = ErrorStatKind::kElementwise;
  double q = 0.0;  // kPercentile only, in [0, 100]

  // The percentile this statistic is (100 for max, 50 for median); -1 for elementwise and mean.
  double Quantile() const;
  friend bool operator==(const ErrorStat&, const ErrorStat&) = default;
};

// "elementwise", "max", "mean", "median", "p99", "p99.5".
std::string ErrorStatName(const ErrorStat& stat);
// Accepts ErrorStatName() spellings, Polygraphy's "elemwise", and "p<q>" with 0 <= q <= 100.
// InvalidArgument quoting the text otherwise.
Result<ErrorStat> ParseErrorStat(std::string_view text);

// The policy one output is judged under, fully resolved.
struct OutputPolicy {
  double atol = 1e-5;
  double rtol = 1e-3;
  ErrorStat check_error_stat;
  double mismatch_ppm = 0.0;
  std::optional<double> min_cosine;
  std::optional<double> min_snr_db;
  // Where atol and rtol came from, for the report: "global setting", "output setting",
  // "float16 default: the target output is float16", "float32 default".
  std::string atol_origin;
  std::string rtol_origin;
  // The output's measured noise floor (max |s - s'|, noise_floor.h), when the comparison was
  // calibrated: errors are reported as multiples of it.
  std::optional<double> noise_floor;
  // --strict-dtype: a floating output whose width changed (float32 -> float16) fails. Without it
  // such a pair is compared by value under the lower precision's tolerance and the change is
  // noted; any other dtype change (integer, bool, string) always fails.
  bool strict_dtype = false;

  Tolerance tolerance() const { return {atol, rtol}; }
};

// One layer of settings (the command line, a policy file, one output's overrides): each knob
// given or not. Values are validated when set (see the Add* functions and policy_file.h).
struct PolicySettings {
  std::optional<double> atol;
  std::optional<double> rtol;
  std::optional<ErrorStat> check_error_stat;
  std::optional<double> mismatch_ppm;
  std::optional<double> min_cosine;
  std::optional<double> min_snr_db;

  // Every knob `overlay` sets replaces this one's.
  void MergeFrom(const PolicySettings& overlay);
  bool empty() const;
};

// A user's replacement for a built-in per-dtype default; either value may be left unset.
struct ToleranceOverride {
  std::optional<double> atol;
  std::optional<double> rtol;
};

// A built-in per-dtype default tolerance and the reasoning behind its numbers.
struct DTypeDefault {
  Tolerance tolerance;
  std::string source;
};

// The built-in default for a floating dtype (float32 and float64 share LEAPP's). REQUIRES:
// IsFloating(dtype). The numbers and their derivation are in policy.cc.
const DTypeDefault& BuiltInDTypeDefault(DType dtype);

// The dtype whose default tolerance governs an output: the lower-precision floating dtype of the
// two sides (bfloat16 < float16 < float32 < float64); an integer side defers to a floating one.
// nullopt when neither side is floating (exact comparison: no tolerance applies) or unknown.
std::optional<DType> DTypeForDefaults(std::optional<DType> source, std::optional<DType> target);

// Defaults a conversion brings with it: `verify --to openvino:fp16` is judged under network-level
// float16 tolerances unless the user says otherwise. They sit below the global and per-output
// settings and above the per-dtype defaults; `origin` is what the report says about them.
struct ConversionDefaults {
  PolicySettings settings;
  // Outputs this conversion judges by another rule: each entry replaces `settings` (not merges
  // into it) for that output. A weight-compression profile holds floating outputs to cosine and
  // SNR but the generated `token_ids` to a share of equal tokens, and the decoded `text` (which
  // differs as soon as one token does) to nothing but being reported.
  std::map<std::string, PolicySettings> per_output;
  std::string origin;  // "network-level float16 default of --to openvino:fp16 (...)"
};

struct Policy {
  PolicySettings global;
  std::optional<ConversionDefaults> conversion_defaults;
  std::map<std::string, PolicySettings> per_output;
  // Only floating dtypes; the built-ins apply where this has no value.
  std::map<DType, ToleranceOverride> dtype_defaults;
  // Measured noise floors per output (compare --calibrate; verify by default): an atol nobody set
  // becomes max(its default, kNoiseFloorFactor x floor). `noise_floor_basis` says what the
  // benign change was ("ONNX Runtime optimization disabled vs extended").
  std::map<std::string, NoiseFloor> noise_floors;
  std::string noise_floor_basis;
  // --strict-dtype, for every output (OutputPolicy::strict_dtype).
  bool strict_dtype = false;

  // The policy for one output, each knob resolved on its own: the output's setting, else the
  // global setting, else (atol and rtol only) the conversion's default or the default of
  // DTypeForDefaults(source, target), else the float32 default; an atol from a default is raised
  // to kNoiseFloorFactor x the output's noise floor when that is larger. A global --atol therefore
  // beats a dtype default, and a per-output one beats both. Dtypes are unknown when the output is
  // missing on a side.
  OutputPolicy For(std::string_view output, std::optional<DType> source = std::nullopt,
                   std::optional<DType> target = std::nullopt) const;

  // Layers `overlay` on top, knob by knob: global settings, each output's settings and each
  // dtype default it sets replace these; what it leaves unset stays.
  void MergeFrom(const Policy& overlay);

  // Every output named by a per-output setting, so a caller can reject names no output has.
  std::vector<std::string> NamedOutputs() const;
};

// Apply one command-line argument: "VALUE" sets the global knob, "NAME:VALUE" one output's. The
// name ends at the last ':' because tensor names contain ':' (tf2onnx's "input:0"; "input:0:1e-4"
// is valid). Later arguments override earlier ones. Each returns InvalidArgument quoting the text,
// and leaves the policy unchanged, when the name before ':' is empty or the value is invalid:
//   atol, rtol      finite and >= 0;
//   check_error_stat  see ParseErrorStat;
//   mismatch_ppm    finite, in [0, 1e6];
//   min_cosine      finite, in [-1, 1];
//   min_snr_db      finite (dB; negative values are allowed).
Status AddAtol(std::string_view text, Policy& policy);
Status AddRtol(std::string_view text, Policy& policy);
Status AddCheckErrorStat(std::string_view text, Policy& policy);
Status AddMismatchPpm(std::string_view text, Policy& policy);
Status AddMinCosine(std::string_view text, Policy& policy);
Status AddMinSnrDb(std::string_view text, Policy& policy);

// The value checks behind the Add* functions and the policy file, on a parsed number. Each returns
// the reason a value is invalid ("tolerances must be finite and >= 0"), or an empty string.
std::string CheckTolerance(double value);
std::string CheckMismatchPpm(double value);
std::string CheckMinCosine(double value);
std::string CheckMinSnrDb(double value);

}  // namespace convgate::compare
