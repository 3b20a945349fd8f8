// A result's "stats" in report.json back into a TensorComparison (the inverse of ComparisonJson).
#include <optional>

#include "json_util.h"
#include "policy_json.h"

namespace convgate::report::internal {
namespace {

// A flat index, or -1 for none.
int64_t FlatIndexOrNone(const JsonFields& json, std::string_view key) {
  const int64_t flat = json.Int(key);
  if (flat < -1) json.Fail(key, "expected a flat index or -1, got " + std::to_string(flat));
  return flat;
}

compare::ValueSummary ValuesFromJson(const JsonFields& json) {
  compare::ValueSummary values;
  values.min = json.Number("min");
  values.max = json.Number("max");
  values.mean = json.Number("mean");
  values.finite = json.Count("finite");
  values.nan = json.CountOr("nan", 0);
  values.pos_inf = json.CountOr("pos_inf", 0);
  values.neg_inf = json.CountOr("neg_inf", 0);
  return values;
}

compare::NonFiniteSplit NonFiniteFromJson(const JsonFields& json) {
  compare::NonFiniteSplit split;
  split.introduced_nan = json.CountOr("introduced_nan", 0);
  split.introduced_inf = json.CountOr("introduced_inf", 0);
  split.inherited = json.CountOr("inherited", 0);
  split.shared_nan = json.CountOr("shared_nan", 0);
  split.shared_inf = json.CountOr("shared_inf", 0);
  split.first_introduced =
      json.Has("first_introduced") ? FlatIndexOrNone(json, "first_introduced") : -1;
  split.first_inherited =
      json.Has("first_inherited") ? FlatIndexOrNone(json, "first_inherited") : -1;
  return split;
}

// ElementJson's inverse; null is "no such element" (flat -1). `abs_error`: the value a numeric
// element leaves out because the result repeats it (max_abs_element's is max_abs_error).
compare::ElementReport ElementFromJson(const JsonFields& parent, std::string_view key,
                                       std::optional<double> abs_error = std::nullopt) {
  compare::ElementReport element;
  if (parent.Raw(key).is_null()) return element;
  const JsonFields json = parent.Object(key);
  element.flat = json.Count("flat_index");
  element.index = json.Ints("index");
  for (int64_t coordinate : element.index) {
    if (coordinate < 0) json.Fail("index", "holds the negative " + std::to_string(coordinate));
  }
  if (!abs_error && json.Raw("source").is_string() && !json.Has("abs_error")) {  // strings
    element.source_text = json.String("source");
    element.target_text = json.String("target");
    return element;
  }
  element.source = json.Number("source");
  element.target = json.Number("target");
  element.abs_error = abs_error && !json.Has("abs_error") ? *abs_error : json.Number("abs_error");
  element.rel_error = json.Number("rel_error");
  element.allowed = json.Number("allowed");
  return element;
}

compare::ErrorStats ErrorsFromJson(const JsonFields& json) {
  compare::ErrorStats errors;
  errors.compared = json.Count("compared");
  errors.max_abs_error = json.Number("max_abs_error");
  errors.mean_abs_error = json.Number("mean_abs_error");
  errors.max_rel_error = json.Number("max_rel_error");
  errors.mean_rel_error = json.Number("mean_rel_error");
  const JsonFields percentiles = json.Object("abs_error_percentiles");
  for (size_t idx = 0; idx < std::size(compare::kPercentiles); ++idx) {
    char key[16];
    std::snprintf(key, sizeof(key), "p%g", compare::kPercentiles[idx]);
    errors.abs_error_percentiles[idx] = percentiles.Number(key);
  }
  errors.max_abs = ElementFromJson(json, "max_abs_element", errors.max_abs_error);
  return errors;
}

void ReadStructure(const JsonFields& json, compare::TensorComparison& cmp) {
  cmp.source_desc = json.String("source");
  cmp.target_desc = json.String("target");
  cmp.dtype_match = json.Bool("dtype_match");
  cmp.shape_match = json.Bool("shape_match");
  cmp.values_compared = json.Bool("values_compared");
  cmp.exact = json.Bool("exact");
  if (json.Has("atol")) cmp.tolerance = {json.Number("atol"), json.Number("rtol")};
  cmp.num_elements = json.Count("num_elements");
}

// What every comparison convgate writes satisfies: no more mismatching or compared elements than
// the output has.
void CheckCounts(const JsonFields& json, const compare::TensorComparison& cmp) {
  if (cmp.mismatches > cmp.num_elements) {
    json.Fail("mismatches", std::to_string(cmp.mismatches) + " is more than num_elements (" +
                                std::to_string(cmp.num_elements) + ")");
  }
  if (cmp.errors.compared > cmp.num_elements) {
    json.Fail("errors", "compared (" + std::to_string(cmp.errors.compared) +
                            ") is more than num_elements (" + std::to_string(cmp.num_elements) +
                            ")");
  }
}

}  // namespace

compare::TensorComparison ComparisonFromJson(const JsonFields& json,
                                             const std::vector<std::string>& fallback_failures,
                                             const compare::Tolerance& fallback_tolerance) {
  compare::TensorComparison cmp;
  cmp.tolerance = fallback_tolerance;
  ReadStructure(json, cmp);
  cmp.source_values = ValuesFromJson(json.Object("source_values"));
  cmp.target_values = ValuesFromJson(json.Object("target_values"));
  cmp.non_finite = NonFiniteFromJson(json.Object("non_finite"));
  cmp.errors = ErrorsFromJson(json.Object("errors"));
  cmp.mismatches = json.Count("mismatches");
  if (json.Has("mismatch_fraction")) {
    cmp.mismatch_fraction = json.NumberIn("mismatch_fraction", 0.0, 1.0);
  } else if (cmp.num_elements > 0) {  // schema 2 leaves it out: it is this quotient
    cmp.mismatch_fraction =
        static_cast<double>(cmp.mismatches) / static_cast<double>(cmp.num_elements);
  }
  cmp.atol_to_pass = json.Number("atol_to_pass");
  cmp.rtol_to_pass = json.Number("rtol_to_pass");
  cmp.worst = ElementFromJson(json, "worst_element");
  CheckCounts(json, cmp);
  cmp.failures =
      json.Has("comparison_failures") ? json.Strings("comparison_failures") : fallback_failures;
  if (json.Has("comparison_notes")) cmp.notes = json.Strings("comparison_notes");
  if (json.Has("metrics")) cmp.metrics = MetricsFromJson(json.Object("metrics"));
  if (json.Has("error_summary")) {
    cmp.summary = ErrorSummaryFromJson(json.Object("error_summary"), cmp.errors);
  }
  cmp.passed = cmp.failures.empty();
  return cmp;
}

}  // namespace convgate::report::internal
