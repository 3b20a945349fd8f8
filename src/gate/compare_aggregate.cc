#include <algorithm>

#include "convgate/gate/judge.h"

namespace convgate::gate {
namespace {

void Add(const OutputCheck& check, OutputAggregate& row, double& abs_error_sum, int64_t& compared) {
  ++row.samples;
  if (!check.passed) {
    ++row.failed_samples;
    if (row.first_failing_sample < 0) row.first_failing_sample = check.sample;
  }
  if (!check.comparison) return;
  const compare::TensorComparison& cmp = *check.comparison;
  if (row.worst_sample < 0 || cmp.errors.max_abs_error > row.max_abs_error) {
    row.max_abs_error = cmp.errors.max_abs_error;
    row.worst_sample = check.sample;
  }
  row.max_rel_error = std::max(row.max_rel_error, cmp.errors.max_rel_error);
  // Weighted by the finite pairs of each sample, so the mean is over every pair compared.
  abs_error_sum += cmp.errors.mean_abs_error * static_cast<double>(cmp.errors.compared);
  compared += cmp.errors.compared;
  row.mismatches += check.mismatches.lo;  // the judged count (its lower bound when bracketed)
  row.elements += cmp.num_elements;
  row.introduced_non_finite += cmp.non_finite.introduced_nan + cmp.non_finite.introduced_inf;
}

}  // namespace

std::vector<OutputAggregate> AggregateBySample(const std::vector<OutputCheck>& checks) {
  std::vector<OutputAggregate> rows;
  std::vector<double> abs_error_sums;
  std::vector<int64_t> compared;
  for (const OutputCheck& check : checks) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const OutputAggregate& row) { return row.output == check.output; });
    size_t idx = static_cast<size_t>(it - rows.begin());
    if (it == rows.end()) {
      rows.emplace_back().output = check.output;
      abs_error_sums.push_back(0.0);
      compared.push_back(0);
    }
    Add(check, rows[idx], abs_error_sums[idx], compared[idx]);
  }
  for (size_t idx = 0; idx < rows.size(); ++idx) {
    if (compared[idx] > 0) rows[idx].mean_abs_error = abs_error_sums[idx] / compared[idx];
  }
  return rows;
}

void FinishChecks(CompareReport& report) {
  AttachHints(report.checks);
  report.aggregates = AggregateBySample(report.checks);
}

}  // namespace convgate::gate
