#include "report/json/comparison.h"

#include <cstdio>
#include <iterator>

#include "report/json/error_summary.h"

namespace convgate::report::internal {
namespace {

using nlohmann::json;

// `compact`: non-finite counts, almost always 0, are left out when they are (schema 2), as a
// comparison repeats its value summaries for every output of every sample. `run` writes them all.
template <typename Io, typename Values>
void ValueFields(Io& io, Values& values, bool compact) {
  io.Number("min", values.min);
  io.Number("max", values.max);
  io.Number("mean", values.mean);
  io.Count("finite", values.finite);
  const Absent<int64_t> zero = compact ? Default<int64_t>(0) : OrElse<int64_t>(0);
  io.Count("nan", values.nan, zero);
  io.Count("pos_inf", values.pos_inf, zero);
  io.Count("neg_inf", values.neg_inf, zero);
}

// Left out when 0, and first indices when -1 (none).
template <typename Io, typename Split>
void NonFiniteFields(Io& io, Split& split) {
  io.Count("introduced_nan", split.introduced_nan, Default<int64_t>(0));
  io.Count("introduced_inf", split.introduced_inf, Default<int64_t>(0));
  io.Count("inherited", split.inherited, Default<int64_t>(0));
  io.Count("shared_nan", split.shared_nan, Default<int64_t>(0));
  io.Count("shared_inf", split.shared_inf, Default<int64_t>(0));
  io.Count("first_introduced", split.first_introduced, Default<int64_t>(-1), /*lo=*/-1);
  io.Count("first_inherited", split.first_inherited, Default<int64_t>(-1), /*lo=*/-1);
}

// `strings`: the element belongs to a string comparison, whose values are texts, not numbers.
// `repeated_abs_error`: the value abs_error is left out at, as the result repeats it
// (max_abs_element's is max_abs_error).
template <typename Io, typename Element>
void ElementFields(Io& io, Element& element, bool strings,
                   std::optional<double> repeated_abs_error) {
  io.Count("flat_index", element.flat);
  io.Index("index", element.index);
  if (strings) {
    io.Text("source", element.source_text);
    io.Text("target", element.target_text);
    return;
  }
  io.Number("source", element.source);
  io.Number("target", element.target);
  io.Number("abs_error", element.abs_error,
            repeated_abs_error ? Default(*repeated_abs_error) : Absent<double>{});
  io.Number("rel_error", element.rel_error);
  io.Number("allowed", element.allowed);
}

std::string PercentileKey(size_t idx) {
  char key[16];
  std::snprintf(key, sizeof(key), "p%g", compare::kPercentiles[idx]);
  return key;
}

template <typename Io, typename Errors>
void ErrorStatsFields(Io& io, Errors& errors) {
  io.Count("compared", errors.compared);
  io.Number("max_abs_error", errors.max_abs_error);
  io.Number("mean_abs_error", errors.mean_abs_error);
  io.Number("max_rel_error", errors.max_rel_error);
  io.Number("mean_rel_error", errors.mean_rel_error);
  io.Object("abs_error_percentiles", errors.abs_error_percentiles, [](auto& part, auto& values) {
    for (size_t idx = 0; idx < std::size(compare::kPercentiles); ++idx) {
      part.Number(PercentileKey(idx), values[idx]);
    }
  });
  io.ObjectOrNull("max_abs_element", errors.max_abs, errors.max_abs.flat < 0,
                  [&](auto& part, auto& element) {
                    ElementFields(part, element, false, errors.max_abs_error);
                  });
}

// Cosine and SNR are null where undefined: without a finite element pair (`no_pairs`; the
// metrics are then all 0), or NaN. NaN is never agreement, and 0 would read as a figure.
template <typename Io, typename Metrics>
void MetricsFields(Io& io, Metrics& metrics, bool no_pairs) {
  io.Number("rmse", metrics.rmse);
  io.Number("nmse", metrics.nmse);
  io.NumberOrNull("cosine", metrics.cosine, no_pairs);
  io.NumberOrNull("snr_db", metrics.snr_db, no_pairs);
  io.Number("psnr_db", metrics.psnr_db);
  io.Number("peak", metrics.peak);
}

// What `convgate check` re-judges from. Reports of schema 1 wrote whole histograms; reports
// written before the summary existed have none.
template <typename Io, typename Cmp>
void ErrorSummaryField(Io& io, Cmp& cmp) {
  if constexpr (Io::kReading) {
    if (!io.Has("error_summary")) return;
    const JsonFields json = io.fields().Object("error_summary");
    if (!json.Has("frontier")) {
      cmp.summary = SummaryFromSchema1(json);
      return;
    }
  }
  io.Via(
      "error_summary", cmp.summary,
      [](const compare::ErrorSummary& summary) { return ToStored(summary); },
      [](const StoredSummary& stored, const JsonFields& json) { return FromStored(stored, json); },
      [&](auto& part, auto& stored) { StoredSummaryFields(part, stored, cmp.errors); });
}

bool IsStringComparison(const compare::TensorComparison& cmp) {
  return cmp.source_desc.rfind("string[", 0) == 0 && cmp.target_desc.rfind("string[", 0) == 0;
}

// mismatches / num_elements (0 when empty): what mismatch_fraction is.
double MismatchFraction(const compare::TensorComparison& cmp) {
  return cmp.num_elements > 0
             ? static_cast<double>(cmp.mismatches) / static_cast<double>(cmp.num_elements)
             : 0.0;
}

template <typename Io, typename Cmp>
void ComparisonFields(Io& io, Cmp& cmp, const ComparisonContext& context) {
  io.Text("source", cmp.source_desc);
  io.Text("target", cmp.target_desc);
  io.Bool("dtype_match", cmp.dtype_match);
  io.Bool("shape_match", cmp.shape_match);
  io.Bool("values_compared", cmp.values_compared);
  io.Bool("exact", cmp.exact);
  // The tolerance is left out as a pair when it is the policy's.
  Absent<double> atol;
  Absent<double> rtol;
  if (context.tolerance) {
    const bool policy_tolerance = cmp.tolerance == *context.tolerance;
    atol = LeftOutIf(policy_tolerance, context.tolerance->atol);
    rtol = LeftOutIf(policy_tolerance, context.tolerance->rtol);
  }
  io.Number("atol", cmp.tolerance.atol, atol);
  io.Number("rtol", cmp.tolerance.rtol, rtol);
  io.Count("num_elements", cmp.num_elements);
  const auto compact_values = [](auto& part, auto& values) {
    ValueFields(part, values, /*compact=*/true);
  };
  io.Object("source_values", cmp.source_values, compact_values);
  io.Object("target_values", cmp.target_values, compact_values);
  io.Object("non_finite", cmp.non_finite,
            [](auto& part, auto& split) { NonFiniteFields(part, split); });
  io.Object("errors", cmp.errors, [](auto& part, auto& errors) { ErrorStatsFields(part, errors); });
  io.Count("mismatches", cmp.mismatches);
  io.NumberIn("mismatch_fraction", cmp.mismatch_fraction, 0.0, 1.0,
              LeftOutIf(true, MismatchFraction(cmp)));
  io.Number("atol_to_pass", cmp.atol_to_pass);
  io.Number("rtol_to_pass", cmp.rtol_to_pass);
  io.ObjectOrNull("worst_element", cmp.worst, cmp.worst.flat < 0, [&](auto& part, auto& element) {
    ElementFields(part, element, IsStringComparison(cmp), std::nullopt);
  });
  io.Texts("comparison_failures", cmp.failures,
           context.failures ? LeftOutIf(cmp.failures == *context.failures, *context.failures)
                            : Absent<std::vector<std::string>>{});
  io.Texts("comparison_notes", cmp.notes, Default(std::vector<std::string>{}));
  io.Object(
      "metrics", cmp.metrics,
      [&](auto& part, auto& metrics) { MetricsFields(part, metrics, cmp.errors.compared == 0); },
      Presence::kOptionalOnRead);
  ErrorSummaryField(io, cmp);
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

json ComparisonJson(const compare::TensorComparison& comparison, const ComparisonContext& context) {
  return JsonWriter::Write(comparison,
                           [&](auto& io, auto& cmp) { ComparisonFields(io, cmp, context); });
}

compare::TensorComparison ComparisonFromJson(const JsonFields& json,
                                             const ComparisonContext& context) {
  compare::TensorComparison cmp;
  JsonReader::Read(json, cmp,
                   [&](auto& io, auto& record) { ComparisonFields(io, record, context); });
  CheckCounts(json, cmp);
  cmp.passed = cmp.failures.empty();
  return cmp;
}

const auto kFullValueFields = [](auto& io, auto& values) { ValueFields(io, values, false); };

json ValueSummaryJson(const compare::ValueSummary& values) {
  return JsonWriter::Write(values, kFullValueFields);
}

compare::ValueSummary ValueSummaryFromJson(const JsonFields& json) {
  return JsonReader::Read<compare::ValueSummary>(json, kFullValueFields);
}

}  // namespace convgate::report::internal
