// report.json: everything a reader needs to explain the verdict without re-running anything.
#include <algorithm>
#include <map>
#include <set>

#include "agreement_report.h"
#include "convgate/report/report.h"
#include "json_util.h"
#include "per_node_report.h"
#include "policy_json.h"

namespace convgate::report {

using nlohmann::json;

namespace {

json SanityJson(const gate::SanityCheck& check) {
  return json{{"sample", check.sample},
              {"output", check.output},
              {"verdict", check.passed ? "pass" : "fail"},
              {"failures", check.failures},
              {"dtype", check.dtype},
              {"shape", check.shape},
              {"declared_dtype", check.declared_dtype},
              {"declared_shape", check.declared_shape},
              {"num_elements", check.num_elements},
              {"values", internal::ValueSummaryJson(check.values)}};
}

// `shared_hints`: per output, the hints written in its aggregates row instead.
json OutputCheckJson(const gate::OutputCheck& check,
                     const std::map<std::string, std::vector<std::string>>& shared_hints) {
  std::vector<std::string> hints = check.hints;
  if (const auto it = shared_hints.find(check.output); it != shared_hints.end()) {
    std::erase_if(hints, [&](const std::string& hint) {
      return std::find(it->second.begin(), it->second.end(), hint) != it->second.end();
    });
  }
  json out{{"sample", check.sample},
           {"output", check.output},
           {"verdict", check.passed ? "pass" : "fail"},
           {"failures", check.failures},
           {"hints", hints},
           // Under the judged tolerance: a count, or a [lo, hi] bracket when `convgate check`
           // recounted it from the error summary.
           {"judged_mismatches", check.mismatches.exact()
                                     ? json(check.mismatches.lo)
                                     : json::array({check.mismatches.lo, check.mismatches.hi})}};
  out["stats"] = check.comparison ? internal::ComparisonJson(*check.comparison) : json(nullptr);
  // What repeats the result is left out, and the reader takes it from the result (schema 2): the
  // comparison's sentences (usually the failures word for word), its tolerance (the policy's,
  // unless `check` judged under another), and the mismatch fraction (mismatches / elements).
  if (check.comparison) {
    json& stats = out["stats"];
    if (check.comparison->failures == check.failures) stats.erase("comparison_failures");
    if (check.comparison->tolerance == check.policy.tolerance()) {
      stats.erase("atol");
      stats.erase("rtol");
    }
    stats.erase("mismatch_fraction");
  }
  internal::AddJudgementJson(check, out);
  // Most results pass with nothing to say: empty lists are left out (schema 2), as a report repeats
  // them for every output of every sample.
  for (const char* key : {"failures", "hints", "notes"}) {
    if (out[key].empty()) out.erase(key);
  }
  return out;
}

// The hints every failing result of an output gives, in the first one's order. They are about the
// output (a tolerance over all samples, a spread seen in each), so report.json writes them once, in
// the output's aggregates row, rather than in each of possibly thousands of results. An output
// without a row keeps its hints in its results.
std::map<std::string, std::vector<std::string>> SharedHints(const gate::CompareReport& report) {
  std::set<std::string> rows;
  for (const gate::OutputAggregate& row : report.aggregates) rows.insert(row.output);
  std::map<std::string, std::vector<std::string>> shared;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.passed || !rows.contains(check.output)) continue;
    auto [it, first] = shared.try_emplace(check.output, check.hints);
    if (first) continue;
    std::erase_if(it->second, [&](const std::string& hint) {
      return std::find(check.hints.begin(), check.hints.end(), hint) == check.hints.end();
    });
  }
  return shared;
}

template <typename Check>
json Summary(const std::vector<Check>& checks, size_t structure_failures) {
  int64_t passed = 0;
  json first = nullptr;
  for (const Check& check : checks) {
    if (check.passed) {
      ++passed;
    } else if (first.is_null()) {
      first = json{{"sample", check.sample}, {"output", check.output}};
    }
  }
  return json{{"checks", checks.size()},
              {"passed", passed},
              {"failed", static_cast<int64_t>(checks.size()) - passed},
              {"structure_failures", structure_failures},
              {"first_failure", first}};
}

}  // namespace

json ReportJson(const gate::RunReport& report, const Invocation& invocation) {
  json out =
      internal::Header(invocation, report.verdict, gate::ExitCodeFor(report.verdict, report.error));
  out["error"] = internal::ErrorJson(report.error);
  out["model"] = internal::SideJson(report.model);
  out["inputs"] = internal::DatasetJson(report.inputs);
  out["bindings"] = report.bindings;
  out["rules"] = {"non-empty", "no NaN or Inf", "declared dtype",
                  "shape consistent with the declaration (symbolic dims bound consistently)"};
  json checks = json::array();
  for (const gate::SanityCheck& check : report.checks) checks.push_back(SanityJson(check));
  out["structure_failures"] = report.structure_failures;
  out["results"] = checks;
  out["summary"] = Summary(report.checks, report.structure_failures.size());
  return out;
}

json ReportJson(const gate::CompareReport& report, const Invocation& invocation) {
  json out =
      internal::Header(invocation, report.verdict, gate::ExitCodeFor(report.verdict, report.error));
  out["error"] = internal::ErrorJson(report.error);
  out["source"] = internal::SideJson(report.source);
  out["target"] = internal::SideJson(report.target);
  out["inputs"] = internal::DatasetJson(report.inputs);
  out["policy"] = internal::PolicyJson(report.policy);
  if (!report.rejudged_from.empty()) out["rejudged_from"] = report.rejudged_from;
  out["structure_failures"] = report.structure_failures;
  json checks = json::array();
  // Every sample of an output is usually judged under the same policy: a result leaves it out when
  // it repeats the previous result's of the same output (schema 2; the reader carries it over).
  std::map<std::string, json> last_policy;
  const std::map<std::string, std::vector<std::string>> shared_hints = SharedHints(report);
  for (const gate::OutputCheck& check : report.checks) {
    json result = OutputCheckJson(check, shared_hints);
    auto [it, first] = last_policy.try_emplace(check.output, result["policy"]);
    if (!first && it->second == result["policy"]) {
      result.erase("policy");
    } else {
      it->second = result["policy"];
    }
    checks.push_back(std::move(result));
  }
  out["results"] = checks;
  json aggregates = json::array();
  for (const gate::OutputAggregate& row : report.aggregates) {
    aggregates.push_back({{"output", row.output},
                          {"samples", row.samples},
                          {"failed_samples", row.failed_samples},
                          {"first_failing_sample", row.first_failing_sample},
                          {"worst_sample", row.worst_sample},
                          {"max_abs_error", internal::Number(row.max_abs_error)},
                          {"mean_abs_error", internal::Number(row.mean_abs_error)},
                          {"max_rel_error", internal::Number(row.max_rel_error)},
                          {"mismatches", row.mismatches},
                          {"elements", row.elements},
                          {"introduced_non_finite", row.introduced_non_finite}});
    if (const auto it = shared_hints.find(row.output);
        it != shared_hints.end() && !it->second.empty()) {
      aggregates.back()["hints"] = it->second;
    }
  }
  out["aggregates"] = aggregates;
  out["summary"] = Summary(report.checks, report.structure_failures.size());
  internal::AddAgreementJson(report, out);
  internal::AddPerNodeJson(report, out);
  return out;
}

}  // namespace convgate::report
