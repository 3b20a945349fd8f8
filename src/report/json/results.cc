#include "report/json/results.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "report/json/comparison.h"
#include "report/json/policy.h"

namespace convgate::report::internal {
namespace {

using nlohmann::json;

const auto kVerdicts = {std::pair<std::string_view, bool>{"pass", true}, {"fail", false}};

// How a result's verdict was reached (compare/judge.h).
enum class VerdictBasis { kExact, kBracketed, kIndeterminate };

VerdictBasis BasisOf(const gate::OutputCheck& check) {
  if (check.indeterminate) return VerdictBasis::kIndeterminate;
  return check.verdict_exact ? VerdictBasis::kExact : VerdictBasis::kBracketed;
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

// What a result leaves out because others hold it: per output, the hints its aggregates row holds
// and the policy the previous result wrote (writing), or read (reading).
struct ResultContext {
  std::map<std::string, std::vector<std::string>> shared_hints;
  std::map<std::string, compare::OutputPolicy> last_policy;
};

// Most results pass with nothing to say: empty lists are left out (schema 2), as a report repeats
// them for every output of every sample.
const Absent<std::vector<std::string>> kOmittedWhenEmpty = Default(std::vector<std::string>{});

// The policy, left out when it repeats the previous result's of the same output. Schema 1 wrote
// the policy's atol and rtol in the result instead.
template <typename Io, typename Check>
void ResultPolicyField(Io& io, Check& check, ResultContext& context) {
  if constexpr (Io::kReading) {
    const JsonFields& json = io.fields();
    if (json.Has("atol")) {
      check.tolerance = {json.Number("atol"), json.Number("rtol")};
    } else if (json.Has("policy")) {
      check.policy = OutputPolicyFromJson(json.Object("policy"));
      check.tolerance = check.policy.tolerance();
    } else if (const auto it = context.last_policy.find(check.output);
               it != context.last_policy.end()) {
      check.policy = it->second;
      check.tolerance = check.policy.tolerance();
    } else {
      json.Fail("policy",
                "missing, and no earlier result of output '" + check.output + "' has one");
    }
    context.last_policy[check.output] = check.policy;
    context.last_policy[check.output].atol = check.tolerance.atol;
    context.last_policy[check.output].rtol = check.tolerance.rtol;
  } else {
    auto [it, first] = context.last_policy.try_emplace(check.output, check.policy);
    const json policy = OutputPolicyJson(check.policy);
    if (first || OutputPolicyJson(it->second) != policy) io.Derived("policy", policy);
    it->second = check.policy;
  }
}

template <typename Io, typename Check>
void ResultFields(Io& io, Check& check, ResultContext& context) {
  io.Count("sample", check.sample);
  io.Text("output", check.output);
  io.Choice("verdict", check.passed, kVerdicts);
  io.Texts("failures", check.failures, kOmittedWhenEmpty);
  std::vector<std::string> hints = check.hints;
  if (const auto it = context.shared_hints.find(check.output); it != context.shared_hints.end()) {
    std::erase_if(hints, [&](const std::string& hint) {
      return std::find(it->second.begin(), it->second.end(), hint) != it->second.end();
    });
  }
  io.Texts("hints", hints, kOmittedWhenEmpty);
  if constexpr (Io::kReading) check.hints = hints;
  ResultPolicyField(io, check, context);
  // Under the judged tolerance: a count, or a [lo, hi] bracket when `convgate check` recounted it
  // from the error summary.
  io.CountOrBracket("judged_mismatches", check.mismatches);
  // What repeats the result is left out of its stats (comparison.h).
  io.OptionalObject("stats", check.comparison, [&](auto& part, auto& comparison) {
    if constexpr (Io::kReading) {
      comparison = ComparisonFromJson(part.fields(), {&check.failures, check.tolerance});
    } else {
      part.out() = ComparisonJson(comparison, {&check.failures, check.policy.tolerance()});
    }
  });
  io.Texts("notes", check.notes, kOmittedWhenEmpty);
  // Calibrated or near-zero outputs only (compare/judge.h).
  io.OptionalNumber("noise_floor_multiple", check.floor_multiple);
  io.Text("floors_undefined", check.floors_undefined, Default(std::string()));
  VerdictBasis basis = BasisOf(check);
  io.Choice("verdict_basis", basis,
            {std::pair<std::string_view, VerdictBasis>{"exact", VerdictBasis::kExact},
             {"bracketed", VerdictBasis::kBracketed},
             {"indeterminate", VerdictBasis::kIndeterminate}},
            OrElse(VerdictBasis::kExact));
  if constexpr (Io::kReading) {
    check.verdict_exact = basis == VerdictBasis::kExact;
    check.indeterminate = basis == VerdictBasis::kIndeterminate;
  }
}

template <typename Io, typename Row>
void AggregateFields(Io& io, Row& row) {
  io.Text("output", row.output);
  io.Count("samples", row.samples);
  io.Count("failed_samples", row.failed_samples);
  io.Count("first_failing_sample", row.first_failing_sample, {}, /*lo=*/-1);
  io.Count("worst_sample", row.worst_sample, {}, /*lo=*/-1);
  io.Number("max_abs_error", row.max_abs_error);
  io.Number("mean_abs_error", row.mean_abs_error);
  io.Number("max_rel_error", row.max_rel_error);
  io.Count("mismatches", row.mismatches);
  io.Count("elements", row.elements);
  io.Count("introduced_non_finite", row.introduced_non_finite);
}

template <typename Io, typename Check>
void SanityFields(Io& io, Check& check) {
  io.Count("sample", check.sample);
  io.Text("output", check.output);
  io.Choice("verdict", check.passed, kVerdicts);
  io.Texts("failures", check.failures);
  io.Text("dtype", check.dtype);
  io.Ints("shape", check.shape);
  io.Text("declared_dtype", check.declared_dtype);
  io.Text("declared_shape", check.declared_shape);
  io.Count("num_elements", check.num_elements);
  io.Described("values", check.values, ValueSummaryJson, ValueSummaryFromJson);
}

const auto kSanityFields = [](auto& io, auto& check) { SanityFields(io, check); };

}  // namespace

json CompareResultsJson(const gate::CompareReport& report) {
  ResultContext context{SharedHints(report), {}};
  json results = json::array();
  for (const gate::OutputCheck& check : report.checks) {
    results.push_back(JsonWriter::Write(
        check, [&](auto& io, auto& record) { ResultFields(io, record, context); }));
  }
  return results;
}

std::vector<gate::OutputCheck> CompareResultsFromJson(const JsonFields& report) {
  ResultContext context;
  std::vector<gate::OutputCheck> checks;
  for (const JsonFields& result : report.Objects("results")) {
    JsonReader::Read(result, checks.emplace_back(),
                     [&](auto& io, auto& record) { ResultFields(io, record, context); });
  }
  return checks;
}

json AggregatesJson(const gate::CompareReport& report) {
  const std::map<std::string, std::vector<std::string>> shared = SharedHints(report);
  json rows = json::array();
  for (const gate::OutputAggregate& row : report.aggregates) {
    json out = JsonWriter::Write(row, [](auto& io, auto& record) { AggregateFields(io, record); });
    if (const auto it = shared.find(row.output); it != shared.end() && !it->second.empty()) {
      out["hints"] = it->second;
    }
    rows.push_back(std::move(out));
  }
  return rows;
}

std::vector<gate::OutputAggregate> AggregatesFromJson(const JsonFields& report,
                                                      std::vector<gate::OutputCheck>& checks) {
  std::vector<gate::OutputAggregate> rows;
  if (!report.Has("aggregates")) return rows;
  for (const JsonFields& json : report.Objects("aggregates")) {
    gate::OutputAggregate& row = rows.emplace_back();
    JsonReader::Read(json, row, [](auto& io, auto& record) { AggregateFields(io, record); });
    if (!json.Has("hints")) continue;
    const std::vector<std::string> shared = json.Strings("hints");
    for (gate::OutputCheck& check : checks) {
      if (check.passed || check.output != row.output) continue;
      check.hints.insert(check.hints.begin(), shared.begin(), shared.end());
    }
  }
  return rows;
}

json SanityResultsJson(const gate::RunReport& report) {
  JsonWriter writer;
  writer.Objects("results", report.checks, kSanityFields);
  return std::move(writer.out()["results"]);
}

std::vector<gate::SanityCheck> SanityResultsFromJson(const JsonFields& report) {
  std::vector<gate::SanityCheck> checks;
  JsonReader(report).Objects("results", checks, kSanityFields);
  return checks;
}

}  // namespace convgate::report::internal
