// The policy in report.json: everything given, every default in force, and the rules, so a reader
// (or `convgate check`) knows exactly what was applied.
#include "policy_json.h"

#include "convgate/compare/judge.h"
#include "json_util.h"
#include "table.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

constexpr DType kFloatingDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                     DType::kBFloat16};

// Only the knobs that are set.
json SettingsJson(const compare::PolicySettings& settings) {
  json out = json::object();
  if (settings.atol) out["atol"] = *settings.atol;
  if (settings.rtol) out["rtol"] = *settings.rtol;
  if (settings.check_error_stat) {
    out["check_error_stat"] = compare::ErrorStatName(*settings.check_error_stat);
  }
  if (settings.mismatch_ppm) out["mismatch_ppm"] = *settings.mismatch_ppm;
  if (settings.min_cosine) out["min_cosine"] = *settings.min_cosine;
  if (settings.min_snr_db) out["min_snr_db"] = *settings.min_snr_db;
  return out;
}

compare::PolicySettings SettingsFromJson(const JsonFields& json) {
  compare::PolicySettings settings;
  settings.atol = json.OptionalNumber("atol");
  settings.rtol = json.OptionalNumber("rtol");
  settings.mismatch_ppm = json.OptionalNumber("mismatch_ppm");
  settings.min_cosine = json.OptionalNumber("min_cosine");
  settings.min_snr_db = json.OptionalNumber("min_snr_db");
  if (json.Has("check_error_stat")) {
    Result<compare::ErrorStat> stat = compare::ParseErrorStat(json.String("check_error_stat"));
    if (!stat.ok()) json.Fail("check_error_stat", stat.status().message());
    settings.check_error_stat = *stat;
  }
  return settings;
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

json DTypeOverridesJson(const compare::Policy& policy) {
  json out = json::object();
  for (const auto& [dtype, values] : policy.dtype_defaults) {
    json entry = json::object();
    if (values.atol) entry["atol"] = *values.atol;
    if (values.rtol) entry["rtol"] = *values.rtol;
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
      {"always_fail", "dtype, shape and element-count mismatches; introduced NaN/Inf"},
      {"exact", "integer, bool and string outputs compare exactly; mismatch_ppm applies"},
      {"floors", "min_cosine and min_snr_db apply on top, to floating outputs"},
      {"dtype_defaults",
       "atol and rtol nobody set come from the default of the lower-precision floating dtype "
       "of the two sides; a global or per-output setting beats it"}};
}

}  // namespace

json PolicyJson(const compare::Policy& policy) {
  const compare::OutputPolicy global = policy.For("");
  json per_output = json::object();
  for (const auto& [name, settings] : policy.per_output) per_output[name] = SettingsJson(settings);
  return json{{"formula", "|target - source| <= atol + rtol * |source|"},
              {"atol", global.atol},
              {"rtol", global.rtol},
              {"check_error_stat", compare::ErrorStatName(global.check_error_stat)},
              {"mismatch_ppm", global.mismatch_ppm},
              {"min_cosine", global.min_cosine ? json(*global.min_cosine) : json(nullptr)},
              {"min_snr_db", global.min_snr_db ? json(*global.min_snr_db) : json(nullptr)},
              {"global_settings", SettingsJson(policy.global)},
              {"per_output", per_output},
              {"dtype_defaults", DTypeDefaultsJson(policy)},
              {"dtype_overrides", DTypeOverridesJson(policy)},
              {"rules", RulesJson()},
              {"integers_and_bool", "exact"},
              {"rel_error_floor", compare::kRelErrorFloor},
              {"percentile_method", "linear (numpy default)"},
              {"non_finite",
               "introduced (target only) fails; shared (same NaN/Inf both sides) is equal; "
               "inherited (source non-finite, target differs) is a mismatch"},
              {"error_summary_resolution", ErrorSummaryResolutionJson()}};
}

json OutputPolicyJson(const compare::OutputPolicy& policy) {
  json out{{"atol", policy.atol},
           {"rtol", policy.rtol},
           {"atol_origin", policy.atol_origin},
           {"rtol_origin", policy.rtol_origin},
           {"check_error_stat", compare::ErrorStatName(policy.check_error_stat)},
           {"mismatch_ppm", policy.mismatch_ppm}};
  // The floors are usually unset: left out then (schema 2), as every result repeats its policy.
  if (policy.min_cosine) out["min_cosine"] = *policy.min_cosine;
  if (policy.min_snr_db) out["min_snr_db"] = *policy.min_snr_db;
  return out;
}

compare::Policy PolicyFromJson(const JsonFields& json) {
  compare::Policy policy;
  if (!json.Has("global_settings")) {
    // Written before the full policy was recorded: atol and rtol were all there was.
    policy.global.atol = json.Number("atol");
    policy.global.rtol = json.Number("rtol");
  } else {
    policy.global = SettingsFromJson(json.Object("global_settings"));
  }
  const JsonFields per_output = json.Object("per_output");
  for (const auto& [name, value] : per_output.object().items()) {
    policy.per_output[name] = SettingsFromJson(JsonFields(value, per_output.Child(name)));
  }
  if (!json.Has("dtype_overrides")) return policy;
  const JsonFields overrides = json.Object("dtype_overrides");
  for (const auto& [name, value] : overrides.object().items()) {
    const std::optional<DType> dtype = ParseDType(name);
    if (!dtype || !IsFloating(*dtype)) overrides.Fail(name, "not a floating dtype");
    const JsonFields entry(value, overrides.Child(name));
    policy.dtype_defaults[*dtype] = {entry.OptionalNumber("atol"), entry.OptionalNumber("rtol")};
  }
  return policy;
}

void AddJudgementJson(const gate::OutputCheck& check, json& out) {
  out["policy"] = OutputPolicyJson(check.policy);
  out["notes"] = check.notes;
  out["verdict_basis"] =
      check.indeterminate ? "indeterminate" : (check.verdict_exact ? "exact" : "bracketed");
}

std::string PolicySummaryText(const compare::Policy& policy) {
  const compare::OutputPolicy global = policy.For("");
  std::string text = "|t - s| <= atol + rtol * |s|, " +
                     compare::ErrorStatName(global.check_error_stat) + ", atol " +
                     Setting(global.atol) + ", rtol " + Setting(global.rtol);
  if (!policy.global.atol || !policy.global.rtol) text += " (per-dtype defaults where unset)";
  if (global.mismatch_ppm > 0) text += ", mismatch_ppm " + Setting(global.mismatch_ppm);
  if (global.min_cosine) text += ", min_cosine " + Setting(*global.min_cosine);
  if (global.min_snr_db) text += ", min_snr_db " + Setting(*global.min_snr_db);
  text += "; integers, bool and strings exact";
  for (const auto& [name, settings] : policy.per_output) {
    std::string knobs;
    const json set = SettingsJson(settings);
    for (const auto& [knob, value] : set.items()) {
      knobs += (knobs.empty() ? "" : ", ") + knob + " " +
               (value.is_string() ? value.get<std::string>() : Setting(value.get<double>()));
    }
    text += "; " + name + ": " + knobs;
  }
  return text;
}

}  // namespace convgate::report::internal
