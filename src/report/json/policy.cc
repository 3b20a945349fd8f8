#include "report/json/policy.h"

#include <string>
#include <type_traits>

#include "convgate/compare/judge.h"
#include "report/json/error_summary.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

constexpr DType kFloatingDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                     DType::kBFloat16};

const auto kStatName = [](const compare::ErrorStat& stat) { return compare::ErrorStatName(stat); };
const auto kParseStat = [](const std::string& text) { return compare::ParseErrorStat(text); };

template <typename Io, typename Settings>
void SettingsFields(Io& io, Settings& settings) {
  io.OptionalNumber("atol", settings.atol);
  io.OptionalNumber("rtol", settings.rtol);
  io.OptionalParsed("check_error_stat", settings.check_error_stat, kStatName, kParseStat);
  io.OptionalNumber("mismatch_ppm", settings.mismatch_ppm);
  io.OptionalNumber("min_cosine", settings.min_cosine);
  io.OptionalNumber("min_snr_db", settings.min_snr_db);
}

// The defaults in force for each floating dtype: built in, or replaced by the policy file.
json DTypeDefaultsJson(const compare::Policy& policy) {
  json out = json::object();
  for (DType dtype : kFloatingDTypes) {
    const compare::DTypeDefault& built_in = compare::BuiltInDTypeDefault(dtype);
    json entry{{"atol", built_in.tolerance.atol},
               {"rtol", built_in.tolerance.rtol},
               {"source", built_in.source}};
    if (auto it = policy.dtype_defaults.find(dtype); it != policy.dtype_defaults.end()) {
      if (it->second.atol) entry["atol"] = *it->second.atol;
      if (it->second.rtol) entry["rtol"] = *it->second.rtol;
      entry["source"] = "policy file (built in: " + built_in.source + ")";
    }
    out[std::string(DTypeName(dtype))] = entry;
  }
  return out;
}

json RulesJson() {
  return json{
      {"elementwise",
       "an element passes when |target - source| <= atol + rtol * |source|; the output passes "
       "when (elements outside) / num_elements * 1e6 <= mismatch_ppm"},
      {"statistic",
       "max, mean, median or pNN of the errors over finite pairs: the output passes when "
       "S(|target - source|) <= atol or S(rel error) <= rtol (Polygraphy's --check-error-stat "
       "rule); inherited non-finite elements are held to mismatch_ppm"},
      {"always_fail",
       "shape and element-count mismatches; dtype changes other than a floating-point width "
       "(all of them with strict_dtype); introduced NaN/Inf"},
      {"float_width",
       "a floating output whose width changed (float32 -> float16) is compared by value under "
       "the lower precision's defaults and noted, unless strict_dtype"},
      {"exact", "integer, bool and string outputs compare exactly; mismatch_ppm applies"},
      {"floors", "min_cosine and min_snr_db apply on top, to floating outputs"},
      {"dtype_defaults",
       "atol and rtol nobody set come from the default of the lower-precision floating dtype "
       "of the two sides; a global or per-output setting beats it"}};
}

// What the writer spells out for people and tools that do not resolve a policy themselves; not
// read back (a policy resolves them again).
void PolicyDerivedFields(JsonWriter& io, const compare::Policy& policy) {
  const compare::OutputPolicy global = policy.For("");
  io.Derived("formula", "|target - source| <= atol + rtol * |source|");
  io.Derived("atol", global.atol);
  io.Derived("rtol", global.rtol);
  io.Derived("check_error_stat", compare::ErrorStatName(global.check_error_stat));
  io.Derived("mismatch_ppm", global.mismatch_ppm);
  io.Derived("min_cosine", global.min_cosine ? json(*global.min_cosine) : json(nullptr));
  io.Derived("min_snr_db", global.min_snr_db ? json(*global.min_snr_db) : json(nullptr));
  io.Derived("dtype_defaults", DTypeDefaultsJson(policy));
  io.Derived("rules", RulesJson());
  io.Derived("integers_and_bool", "exact");
  io.Derived("rel_error_floor", compare::kRelErrorFloor);
  io.Derived("percentile_method", "linear (numpy default)");
  io.Derived("non_finite",
             "introduced (target only) fails; shared (same NaN/Inf both sides) is equal; "
             "inherited (source non-finite, target differs) is a mismatch");
  io.Derived("error_summary_resolution", ErrorSummaryResolutionJson());
}
void PolicyDerivedFields(JsonReader& /*io*/, const compare::Policy& /*policy*/) {}

template <typename Io, typename Policy>
void PolicyFields(Io& io, Policy& policy) {
  PolicyDerivedFields(io, policy);
  const auto settings = [](auto& part, auto& knobs) { SettingsFields(part, knobs); };
  io.Object("global_settings", policy.global, settings, Presence::kOptionalOnRead);
  if constexpr (Io::kReading) {
    if (!io.Has("global_settings")) {
      // Written before the full policy was recorded: atol and rtol were all there was.
      policy.global.atol = io.fields().Number("atol");
      policy.global.rtol = io.fields().Number("rtol");
    }
  }
  io.Map("per_output", policy.per_output, settings);
  io.Bool("strict_dtype", policy.strict_dtype, Default(false));
  io.OptionalObject(
      "conversion_defaults", policy.conversion_defaults, [&settings](auto& part, auto& defaults) {
        part.Text("origin", defaults.origin);
        part.Object("settings", defaults.settings, settings);
        // Left out when empty, so reports of the float16 profile read as before.
        if (std::decay_t<decltype(part)>::kReading || !defaults.per_output.empty()) {
          part.Map("per_output", defaults.per_output, settings, Presence::kOptionalOnRead);
        }
      });
  io.Map(
      "dtype_overrides", policy.dtype_defaults,
      [](auto& part, auto& values) {
        part.OptionalNumber("atol", values.atol);
        part.OptionalNumber("rtol", values.rtol);
      },
      [](DType dtype) { return std::string(DTypeName(dtype)); },
      [](const std::string& name, const JsonFields& overrides) {
        const std::optional<DType> dtype = ParseDType(name);
        if (!dtype || !IsFloating(*dtype)) overrides.Fail(name, "not a floating dtype");
        return *dtype;
      },
      Presence::kOptionalOnRead);
  // Calibrated comparisons only (noise_floor.h): left out otherwise.
  if (!policy.noise_floors.empty() || Io::kReading) {
    io.Map(
        "noise_floors", policy.noise_floors,
        [](auto& part, auto& floor) {
          part.Number("max_abs", floor.max_abs);
          part.Number("max_rel", floor.max_rel);
          part.Count("samples", floor.samples);
        },
        Presence::kOptionalOnRead);
    io.Text("noise_floor_basis", policy.noise_floor_basis, Default(std::string()));
  }
}

// The floors are usually unset: left out then (schema 2), as every result repeats its policy.
template <typename Io, typename OutputPolicy>
void OutputPolicyFields(Io& io, OutputPolicy& policy) {
  const compare::OutputPolicy defaults;
  io.Number("atol", policy.atol);
  io.Number("rtol", policy.rtol);
  io.Text("atol_origin", policy.atol_origin, OrElse(defaults.atol_origin));
  io.Text("rtol_origin", policy.rtol_origin, OrElse(defaults.rtol_origin));
  io.Parsed("check_error_stat", policy.check_error_stat, kStatName, kParseStat,
            OrElse(defaults.check_error_stat));
  io.Number("mismatch_ppm", policy.mismatch_ppm, OrElse(defaults.mismatch_ppm));
  io.OptionalNumber("min_cosine", policy.min_cosine);
  io.OptionalNumber("min_snr_db", policy.min_snr_db);
  io.OptionalNumber("noise_floor", policy.noise_floor);
  io.Bool("strict_dtype", policy.strict_dtype, Default(false));
}

const auto kPolicyFields = [](auto& io, auto& policy) { PolicyFields(io, policy); };
const auto kSettingsFields = [](auto& io, auto& settings) { SettingsFields(io, settings); };
const auto kOutputPolicyFields = [](auto& io, auto& policy) { OutputPolicyFields(io, policy); };

}  // namespace

json PolicyJson(const compare::Policy& policy) { return JsonWriter::Write(policy, kPolicyFields); }

compare::Policy PolicyFromJson(const JsonFields& json) {
  return JsonReader::Read<compare::Policy>(json, kPolicyFields);
}

json PolicySettingsJson(const compare::PolicySettings& settings) {
  return JsonWriter::Write(settings, kSettingsFields);
}

json OutputPolicyJson(const compare::OutputPolicy& policy) {
  return JsonWriter::Write(policy, kOutputPolicyFields);
}

compare::OutputPolicy OutputPolicyFromJson(const JsonFields& json) {
  return JsonReader::Read<compare::OutputPolicy>(json, kOutputPolicyFields);
}

}  // namespace convgate::report::internal
