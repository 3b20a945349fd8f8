#include "convgate/compare/policy.h"

#include <charconv>

#include "convgate/core/numbers.h"

namespace convgate::compare {
namespace {

// Per-dtype default tolerances. A converted model's output differs from its source's by the
// rounding of every operation it runs in the lower precision, so the defaults scale with that
// precision's unit roundoff u (half the distance from 1 to the next representable number).
//
// float32 and float64: LEAPP's rtol 1e-3, atol 1e-5 (compile_graph(validate=True)), which
//   convgate adopts: loose enough for reordered fp32 accumulation, tight enough to catch a 1%
//   weight change. float64 outputs get the same: a converted model's error comes from what it
//   computes, not from the width it reports in.
// float16 (u = 2^-11 = 4.9e-4) and bfloat16 (u = 2^-8 = 3.9e-3):
//   rtol = 10 u, rounded up: float16 5e-3, bfloat16 4e-2. ONNX Runtime's kernel tests
//   (onnxruntime/test/providers/checkers.cc, DefaultTolerance<MLFloat16> and <BFloat16>) allow
//   about 2 u for one operator; rounding errors of independent operations grow like sqrt(n) u
//   over n of them (Higham and Mary's probabilistic bound, SIAM J. Sci. Comput. 2019), so 10 u
//   covers about 100 roundings in a row, a network of a few dozen layers. For float16 it stays
//   below the 1% change a gate must still catch.
//   atol: ONNX Runtime's own absolute thresholds for these types, float16 2.5e-3 and bfloat16
//   2e-2, which checkers.cc derives as 10 times the largest rounding error of values in [0, 1)
//   (2^-12 and 2^-9): they absorb the error of values near zero, where no relative bound holds.
const DTypeDefault kFloat32Default{
    {1e-5, 1e-3}, "LEAPP's defaults (compile_graph(validate=True)), adopted by convgate"};
const DTypeDefault kFloat16Default{
    {2.5e-3, 5e-3},
    "rtol = 10 x float16's unit roundoff 2^-11, rounded up; atol = ONNX Runtime's float16 test "
    "threshold (checkers.cc: 10 x the largest rounding error in [0, 1))"};
const DTypeDefault kBFloat16Default{
    {2e-2, 4e-2},
    "rtol = 10 x bfloat16's unit roundoff 2^-8, rounded up; atol = ONNX Runtime's bfloat16 test "
    "threshold (checkers.cc: 10 x the largest rounding error in [0, 1))"};

// Lower ranks are less precise (fewer mantissa bits): bfloat16 8, float16 11, float32 24.
int PrecisionRank(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16:
      return 0;
    case DType::kFloat16:
      return 1;
    case DType::kFloat32:
      return 2;
    default:
      return 3;  // float64
  }
}

// "the target output is float16", "both outputs are bfloat16".
std::string DefaultReason(DType dtype, std::optional<DType> source, std::optional<DType> target) {
  const std::string name(DTypeName(dtype));
  if (source == dtype && target == dtype) return "both outputs are " + name;
  if (target == dtype) return "the target output is " + name;
  return "the source output is " + name;
}

template <typename T>
void Overlay(std::optional<T>& base, const std::optional<T>& overlay) {
  if (overlay.has_value()) base = overlay;
}

// Resolves atol or rtol: the output's setting, the global one, the dtype default.
double ResolveTolerance(std::optional<double> output_value, std::optional<double> global_value,
                        double default_value, const std::string& default_origin,
                        std::string& origin) {
  if (output_value.has_value()) {
    origin = "output setting";
    return *output_value;
  }
  if (global_value.has_value()) {
    origin = "global setting";
    return *global_value;
  }
  origin = default_origin;
  return default_value;
}

}  // namespace

double ErrorStat::Quantile() const {
  switch (kind) {
    case ErrorStatKind::kMax:
      return 100.0;
    case ErrorStatKind::kMedian:
      return 50.0;
    case ErrorStatKind::kPercentile:
      return q;
    default:
      return -1.0;
  }
}

std::string ErrorStatName(const ErrorStat& stat) {
  switch (stat.kind) {
    case ErrorStatKind::kElementwise:
      return "elementwise";
    case ErrorStatKind::kMax:
      return "max";
    case ErrorStatKind::kMean:
      return "mean";
    case ErrorStatKind::kMedian:
      return "median";
    case ErrorStatKind::kPercentile:
      break;
  }
  return "p" + FormatShortest(stat.q);
}

Result<ErrorStat> ParseErrorStat(std::string_view text) {
  if (text == "elementwise" || text == "elemwise") return ErrorStat{};
  if (text == "max") return ErrorStat{ErrorStatKind::kMax};
  if (text == "mean") return ErrorStat{ErrorStatKind::kMean};
  if (text == "median") return ErrorStat{ErrorStatKind::kMedian};
  const std::string_view number = text.empty() ? text : text.substr(1);
  double q = -1.0;
  const std::from_chars_result parsed =
      std::from_chars(number.data(), number.data() + number.size(), q);
  const bool is_percentile = !text.empty() && text[0] == 'p' && !number.empty() &&
                             parsed.ec == std::errc() &&
                             parsed.ptr == number.data() + number.size();
  if (!is_percentile || !(q >= 0.0 && q <= 100.0)) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not an error statistic: use elementwise, max, mean, "
                                   "median or pNN with 0 <= NN <= 100 (p99, p99.5)");
  }
  return ErrorStat{ErrorStatKind::kPercentile, q};
}

void PolicySettings::MergeFrom(const PolicySettings& overlay) {
  Overlay(atol, overlay.atol);
  Overlay(rtol, overlay.rtol);
  Overlay(check_error_stat, overlay.check_error_stat);
  Overlay(mismatch_ppm, overlay.mismatch_ppm);
  Overlay(min_cosine, overlay.min_cosine);
  Overlay(min_snr_db, overlay.min_snr_db);
}

bool PolicySettings::empty() const {
  return !atol && !rtol && !check_error_stat && !mismatch_ppm && !min_cosine && !min_snr_db;
}

const DTypeDefault& BuiltInDTypeDefault(DType dtype) {
  if (dtype == DType::kFloat16) return kFloat16Default;
  if (dtype == DType::kBFloat16) return kBFloat16Default;
  return kFloat32Default;
}

std::optional<DType> DTypeForDefaults(std::optional<DType> source, std::optional<DType> target) {
  std::optional<DType> chosen;
  for (std::optional<DType> side : {source, target}) {
    if (!side.has_value() || !IsFloating(*side)) continue;
    if (!chosen.has_value() || PrecisionRank(*side) < PrecisionRank(*chosen)) chosen = side;
  }
  return chosen;
}

OutputPolicy Policy::For(std::string_view output, std::optional<DType> source,
                         std::optional<DType> target) const {
  PolicySettings settings;
  if (conversion_defaults) {
    const auto special = conversion_defaults->per_output.find(std::string(output));
    settings = special == conversion_defaults->per_output.end() ? conversion_defaults->settings
                                                                : special->second;
  }
  const PolicySettings conversion = settings;
  settings.MergeFrom(global);
  const auto it = per_output.find(std::string(output));
  const PolicySettings* own = it == per_output.end() ? nullptr : &it->second;
  if (own != nullptr) settings.MergeFrom(*own);
  const std::optional<DType> basis = DTypeForDefaults(source, target);
  Tolerance fallback = kFloat32Default.tolerance;
  std::string origin = "float32 default";
  if (basis.has_value()) {
    fallback = BuiltInDTypeDefault(*basis).tolerance;
    origin = std::string(DTypeName(*basis)) + " default";
    if (auto user = dtype_defaults.find(*basis); user != dtype_defaults.end()) {
      fallback.atol = user->second.atol.value_or(fallback.atol);
      fallback.rtol = user->second.rtol.value_or(fallback.rtol);
      origin += " (policy file)";
    }
    origin += ": " + DefaultReason(*basis, source, target);
  }
  // A conversion's default replaces the dtype default where it sets a value.
  std::string atol_origin = origin, rtol_origin = origin;
  if (conversion.atol) {
    fallback.atol = *conversion.atol;
    atol_origin = conversion_defaults->origin;
  }
  if (conversion.rtol) {
    fallback.rtol = *conversion.rtol;
    rtol_origin = conversion_defaults->origin;
  }
  // A measured floor raises a default, never a setting: the user's atol is the user's.
  std::optional<double> floor;
  if (auto measured = noise_floors.find(std::string(output)); measured != noise_floors.end()) {
    floor = measured->second.max_abs;
    if (kNoiseFloorFactor * *floor > fallback.atol) {
      fallback.atol = kNoiseFloorFactor * *floor;
      atol_origin = FormatShortest(kNoiseFloorFactor) + " x the noise floor " +
                    FormatSignificant(*floor, 2) +
                    (noise_floor_basis.empty() ? "" : " (" + noise_floor_basis + ")");
    }
  }
  OutputPolicy resolved;
  resolved.noise_floor = floor;
  resolved.atol = ResolveTolerance(own ? own->atol : std::nullopt, global.atol, fallback.atol,
                                   atol_origin, resolved.atol_origin);
  resolved.rtol = ResolveTolerance(own ? own->rtol : std::nullopt, global.rtol, fallback.rtol,
                                   rtol_origin, resolved.rtol_origin);
  resolved.check_error_stat = settings.check_error_stat.value_or(ErrorStat{});
  resolved.mismatch_ppm = settings.mismatch_ppm.value_or(0.0);
  resolved.min_cosine = settings.min_cosine;
  resolved.min_snr_db = settings.min_snr_db;
  resolved.strict_dtype = strict_dtype;
  return resolved;
}

void Policy::MergeFrom(const Policy& overlay) {
  global.MergeFrom(overlay.global);
  if (overlay.conversion_defaults) conversion_defaults = overlay.conversion_defaults;
  for (const auto& [name, floor] : overlay.noise_floors) noise_floors[name] = floor;
  if (!overlay.noise_floor_basis.empty()) noise_floor_basis = overlay.noise_floor_basis;
  strict_dtype = strict_dtype || overlay.strict_dtype;
  for (const auto& [name, settings] : overlay.per_output) per_output[name].MergeFrom(settings);
  for (const auto& [dtype, values] : overlay.dtype_defaults) {
    ToleranceOverride& mine = dtype_defaults[dtype];
    Overlay(mine.atol, values.atol);
    Overlay(mine.rtol, values.rtol);
  }
}

std::vector<std::string> Policy::NamedOutputs() const {
  std::vector<std::string> names;
  for (const auto& [name, settings] : per_output) names.push_back(name);
  return names;
}

}  // namespace convgate::compare
