// The tolerance policy and the judging evidence in report.json, written and read back, so
// `convgate check` can re-judge a saved report (PolicyJson itself is declared in json_util.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/compare/policy.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/gate/results.h"
#include "json_reader.h"

namespace convgate::report::internal {

// One result's resolved policy: every knob's value and where atol and rtol came from.
nlohmann::json OutputPolicyJson(const compare::OutputPolicy& policy);
// The policy as PolicyJson wrote it. Reports written before the full policy was recorded carry
// only atol, rtol and per-output atol/rtol; those read back as explicit settings.
compare::Policy PolicyFromJson(const JsonFields& json);
// One line for the console: "elementwise, atol 1e-05, rtol 0.001 (per-dtype defaults where unset);
// logits: atol 0.0001".
std::string PolicySummaryText(const compare::Policy& policy);

// Metrics and the error summary (histograms), and their inverses. Readers throw BadField.
nlohmann::json MetricsJson(const compare::Metrics& metrics);
compare::Metrics MetricsFromJson(const JsonFields& json);
nlohmann::json ErrorSummaryJson(const compare::ErrorSummary& summary);
// Erases from a written `summary` the counts and maxima that repeat the result's `errors` (schema
// 2): a report repeats them for every output of every sample.
void LeaveOutWhatErrorsRepeat(const nlohmann::json& errors, nlohmann::json& summary);
// `errors`: the result's, for the counts and maxima the summary leaves out when it repeats them.
compare::ErrorSummary ErrorSummaryFromJson(const JsonFields& json,
                                           const compare::ErrorStats& errors);

// A result's "stats" read back into the TensorComparison ComparisonJson wrote. Fields added after
// schema 1 first shipped (comparison_failures, comparison_notes, metrics, error_summary) default
// when absent, and so do those schema 2 leaves out when they repeat the result: the result's
// failures (`fallback_failures`) stand in for comparison_failures, its policy's tolerance
// (`fallback_tolerance`) for atol and rtol; mismatch_fraction is recomputed.
compare::TensorComparison ComparisonFromJson(const JsonFields& json,
                                             const std::vector<std::string>& fallback_failures,
                                             const compare::Tolerance& fallback_tolerance);

// report.json's "agreements" (none when absent), carried over by `convgate check` unchanged.
std::vector<gate::AgreementRecord> AgreementsFromJson(const JsonFields& report);

// What report.json says about the error summary's resolution (README "Re-judging").
nlohmann::json ErrorSummaryResolutionJson();

// Adds one result's judging to its report.json entry: "policy" (resolved), "notes" and
// "verdict_basis" ("exact"; "bracketed" when decided from histogram brackets; "indeterminate").
void AddJudgementJson(const gate::OutputCheck& check, nlohmann::json& out);

}  // namespace convgate::report::internal
