#include "convgate/compare/tolerance.h"

#include <charconv>
#include <cmath>
#include <string>

namespace convgate::compare {
namespace {

// Parses one --atol / --rtol argument into `global` or `per_output`. `kind` is "atol" or "rtol".
Status AddTolerance(std::string_view kind, std::string_view text, double& global,
                    std::map<std::string, double>& per_output) {
  auto invalid = [&](std::string_view why) {
    return Status::InvalidArgument("invalid " + std::string(kind) + " '" + std::string(text) +
                                   "': " + std::string(why));
  };
  // The last ':' separates the name: tf2onnx names tensors "input:0", so "input:0:1e-4" is the
  // tolerance 1e-4 for "input:0".
  const size_t colon = text.rfind(':');
  const bool named = colon != std::string_view::npos;
  const std::string_view name = named ? text.substr(0, colon) : std::string_view();
  const std::string_view number = named ? text.substr(colon + 1) : text;
  if (named && name.empty()) return invalid("the output name before ':' is empty");
  double value = 0.0;
  const std::from_chars_result parsed =
      std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || parsed.ec != std::errc() || parsed.ptr != number.data() + number.size()) {
    return invalid("'" + std::string(number) + "' is not a number");
  }
  if (!std::isfinite(value) || value < 0.0) {
    return invalid("tolerances must be finite and >= 0, got " + std::string(number));
  }
  if (named) {
    per_output[std::string(name)] = value;
  } else {
    global = value;
  }
  return Status::OK();
}

}  // namespace

Tolerance Policy::For(std::string_view output) const {
  Tolerance tolerance = global;
  const std::string name(output);
  if (auto it = atol_per_output.find(name); it != atol_per_output.end())
    tolerance.atol = it->second;
  if (auto it = rtol_per_output.find(name); it != rtol_per_output.end())
    tolerance.rtol = it->second;
  return tolerance;
}

Status AddAtol(std::string_view text, Policy& policy) {
  return AddTolerance("atol", text, policy.global.atol, policy.atol_per_output);
}

Status AddRtol(std::string_view text, Policy& policy) {
  return AddTolerance("rtol", text, policy.global.rtol, policy.rtol_per_output);
}

}  // namespace convgate::compare
