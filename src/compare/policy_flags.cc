// The policy's command-line arguments: "VALUE" or "NAME:VALUE", validated before any model loads.
#include <charconv>
#include <cmath>
#include <functional>
#include <string>

#include "convgate/compare/policy.h"
#include "convgate/core/scoped.h"

namespace convgate::compare {
namespace {

// The settings layer an argument writes into: the global one or the named output's (the split is
// convgate/core/scoped.h's: tf2onnx names tensors "input:0", so "input:0:1e-4" sets "input:0").
PolicySettings& Target(const ScopedValue& arg, Policy& policy) {
  return arg.has_name_separator ? policy.per_output[arg.name] : policy.global;
}

// A number parsed as a whole (no spaces, no trailing text), or nullopt.
std::optional<double> ParseNumber(std::string_view text) {
  double value = 0.0;
  const std::from_chars_result parsed =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

// Parses "[NAME:]NUMBER", validates it with `check` and stores it with `store`.
Status AddNumber(std::string_view kind, std::string_view text, Policy& policy,
                 std::string (*check)(double),
                 const std::function<void(PolicySettings&, double)>& store) {
  auto invalid = [&](const std::string& why) {
    return Status::InvalidArgument("invalid " + std::string(kind) + " '" + std::string(text) +
                                   "': " + why);
  };
  const ScopedValue arg = SplitScoped(text);
  if (arg.has_name_separator && arg.name.empty())
    return invalid("the output name before ':' is empty");
  const std::optional<double> value = ParseNumber(arg.value);
  if (!value.has_value()) return invalid("'" + std::string(arg.value) + "' is not a number");
  if (std::string why = check(*value); !why.empty()) {
    return invalid(why + ", got " + std::string(arg.value));
  }
  store(Target(arg, policy), *value);
  return Status::OK();
}

}  // namespace

std::string CheckTolerance(double value) {
  return std::isfinite(value) && value >= 0.0 ? "" : "tolerances must be finite and >= 0";
}

std::string CheckMismatchPpm(double value) {
  return value >= 0.0 && value <= 1e6 ? "" : "mismatch ppm must be in [0, 1000000]";
}

std::string CheckMinCosine(double value) {
  return value >= -1.0 && value <= 1.0 ? "" : "a cosine similarity must be in [-1, 1]";
}

std::string CheckMinSnrDb(double value) {
  return std::isfinite(value) ? "" : "an SNR floor must be a finite number of dB";
}

Status AddAtol(std::string_view text, Policy& policy) {
  return AddNumber("atol", text, policy, CheckTolerance,
                   [](PolicySettings& settings, double value) { settings.atol = value; });
}

Status AddRtol(std::string_view text, Policy& policy) {
  return AddNumber("rtol", text, policy, CheckTolerance,
                   [](PolicySettings& settings, double value) { settings.rtol = value; });
}

Status AddMismatchPpm(std::string_view text, Policy& policy) {
  return AddNumber("mismatch ppm", text, policy, CheckMismatchPpm,
                   [](PolicySettings& settings, double value) { settings.mismatch_ppm = value; });
}

Status AddMinCosine(std::string_view text, Policy& policy) {
  return AddNumber("min cosine", text, policy, CheckMinCosine,
                   [](PolicySettings& settings, double value) { settings.min_cosine = value; });
}

Status AddMinSnrDb(std::string_view text, Policy& policy) {
  return AddNumber("min SNR", text, policy, CheckMinSnrDb,
                   [](PolicySettings& settings, double value) { settings.min_snr_db = value; });
}

Status AddCheckErrorStat(std::string_view text, Policy& policy) {
  const ScopedValue arg = SplitScoped(text);
  const std::string quoted = "invalid check-error-stat '" + std::string(text) + "': ";
  if (arg.has_name_separator && arg.name.empty()) {
    return Status::InvalidArgument(quoted + "the output name before ':' is empty");
  }
  Result<ErrorStat> stat = ParseErrorStat(arg.value);
  if (!stat.ok()) return Status::InvalidArgument(quoted + stat.status().message());
  Target(arg, policy).check_error_stat = *stat;
  return Status::OK();
}

}  // namespace convgate::compare
