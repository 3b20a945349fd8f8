// What a finished job left in its folder, read back for the store: report.json's per-output
// figures (docs/guide.md, "Result files") and verify_result.json's conversion path.
#include <fstream>
#include <optional>

#include "convgate/batch/batch.h"
#include "convgate/core/file_util.h"
#include "convgate/core/json_field.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<json> ReadJson(const fs::path& path) {
  Result<std::string> text = ReadFile(path, kMaxTextFileBytes);
  if (!text.ok()) return std::nullopt;
  json parsed = json::parse(*text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

// The value at `path` inside `object` when it is a number.
std::optional<double> Number(const json& object, std::initializer_list<const char*> path) {
  const json* node = &object;
  for (const char* key : path) {
    if (!node->is_object()) return std::nullopt;
    auto it = node->find(key);
    if (it == node->end()) return std::nullopt;
    node = &*it;
  }
  if (!node->is_number()) return std::nullopt;
  return node->get<double>();
}

std::optional<int64_t> Count(const json& object, std::initializer_list<const char*> path) {
  const std::optional<double> value = Number(object, path);
  if (!value) return std::nullopt;
  return static_cast<int64_t>(*value);
}

// NaN + Inf elements of a value summary (report.json's source_values, target_values, values).
std::optional<int64_t> NonFinite(const json& values) {
  if (!values.is_object() || !values.contains("finite")) return std::nullopt;
  // Compact summaries leave zero counts out.
  return Count(values, {"nan"}).value_or(0) + Count(values, {"pos_inf"}).value_or(0) +
         Count(values, {"neg_inf"}).value_or(0);
}

store::OutputRecord OutputOf(const json& result) {
  store::OutputRecord output;
  output.sample = static_cast<int64_t>(Number(result, {"sample"}).value_or(0));
  output.output = JsonTextOr(result, "output", "");
  // report.json's results say "pass" or "fail" (report/json/results.cc); anything else is a
  // report that cannot be trusted.
  output.verdict = ParseVerdict(JsonTextOr(result, "verdict", "")).value_or(Verdict::kError);
  // A run's result has the model's values; a comparison's, the target's and the split.
  if (result.contains("values")) output.non_finite = NonFinite(result["values"]);
  const json stats = result.value("stats", json::object());
  if (stats.is_object() && stats.contains("target_values")) {
    output.non_finite = NonFinite(stats["target_values"]);
    output.introduced_non_finite = Count(stats, {"non_finite", "introduced_nan"}).value_or(0) +
                                   Count(stats, {"non_finite", "introduced_inf"}).value_or(0);
  }
  // NaN is never agreement: without a finite element pair there is no error or agreement figure,
  // and where the target introduced NaN or Inf the finite pairs' cosine and SNR would pass for
  // the output's (report.json writes them over the finite pairs, null when undefined).
  const bool no_pairs = Number(result, {"stats", "errors", "compared"}).value_or(1) == 0;
  const bool introduced = output.introduced_non_finite.value_or(0) > 0;
  if (!no_pairs) {
    output.max_abs_error = Number(result, {"stats", "errors", "max_abs_error"});
    output.mean_abs_error = Number(result, {"stats", "errors", "mean_abs_error"});
  }
  output.mismatches = Count(result, {"stats", "mismatches"});
  if (!no_pairs && !introduced) {
    output.cosine = Number(result, {"stats", "metrics", "cosine"});
    output.snr_db = Number(result, {"stats", "metrics", "snr_db"});
  }
  const json worst = stats.is_object() ? stats.value("worst_element", json::object()) : json();
  if (worst.is_object()) {
    if (worst.contains("index")) output.worst_index = worst["index"].dump();
    output.worst_source = Number(worst, {"source"});
    output.worst_target = Number(worst, {"target"});
  }
  return output;
}

}  // namespace

void ReadJobJson(const json* verify, const json* report, const std::string& command,
                 store::JobRecord& job) {
  if (verify != nullptr && verify->is_object()) {
    if (verify->contains("conversion_path") && (*verify)["conversion_path"].is_string()) {
      job.conversion_path = (*verify)["conversion_path"].get<std::string>();
    }
    if (job.verdict == Verdict::kFail && verify->contains("error") &&
        (*verify)["error"].is_string()) {
      job.error_text = (*verify)["error"].get<std::string>();
    }
  }
  if (report == nullptr || !report->is_object()) return;
  // verify's conversion record: the converter that ran (the parameters are the job's own,
  // known before it ran: JobRecord::conversion_params).
  if (report->contains("conversion") && (*report)["conversion"].is_object()) {
    const json& conversion = (*report)["conversion"];
    const std::string tool = JsonTextOr(conversion, "tool", "");
    const std::string version = JsonTextOr(conversion, "tool_version", "");
    job.converter_version = tool + (tool.empty() || version.empty() ? "" : " ") + version;
  }
  // An error stopped the job at a stage: "convert-failed", "load-failed", ...
  if (job.error_category == "cannot-run" && report->contains("error")) {
    const json& error = (*report)["error"];
    if (error.is_object() && error.contains("stage") && error["stage"].is_string()) {
      job.error_category = error["stage"].get<std::string>() + "-failed";
    }
    if (error.is_object() && error.contains("message") && error["message"].is_string()) {
      job.error_text = error["message"].get<std::string>();
    }
  }
  // verify nests the comparison's report; compare is one.
  const json* comparison = report;
  if (command == "verify") {
    if (!report->contains("comparison")) return;
    comparison = &(*report)["comparison"];
  }
  if (!comparison->is_object() || !comparison->contains("results") ||
      !(*comparison)["results"].is_array()) {
    return;
  }
  for (const json& result : (*comparison)["results"]) {
    if (result.is_object()) job.outputs.push_back(OutputOf(result));
  }
}

void ReadJobResults(const fs::path& dir, const std::string& command, store::JobRecord& job) {
  const std::optional<json> verify = ReadJson(dir / "verify_result.json");
  const std::optional<json> report = ReadJson(dir / "report.json");
  ReadJobJson(verify ? &*verify : nullptr, report ? &*report : nullptr, command, job);
}

}  // namespace convgate::batch
