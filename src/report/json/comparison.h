// A result's "stats" in report.json: one TensorComparison, each of its records described once
// (codec.h) and read back by `convgate check` through the same descriptions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/compare/tensor_compare.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

// What a comparison leaves out because its result repeats it (schema 2), and so reads back from
// the result: the result's failures (the comparison's sentences, usually word for word) and the
// tolerance of the result's policy (the comparison's, unless `check` judged under another).
// Without them (null, nullopt) nothing is left out, and reading requires everything.
struct ComparisonContext {
  const std::vector<std::string>* failures = nullptr;
  std::optional<compare::Tolerance> tolerance;
};

nlohmann::json ComparisonJson(const compare::TensorComparison& comparison,
                              const ComparisonContext& context = {});
// Fields added after schema 1 first shipped (comparison_failures, comparison_notes, metrics,
// error_summary) default when absent; mismatch_fraction (left out in schema 2) is recomputed.
// Throws BadField.
compare::TensorComparison ComparisonFromJson(const JsonFields& json,
                                             const ComparisonContext& context);

// A tensor's value summary with every count, as `run` writes it for each output.
nlohmann::json ValueSummaryJson(const compare::ValueSummary& values);
compare::ValueSummary ValueSummaryFromJson(const JsonFields& json);

}  // namespace convgate::report::internal
