// The error summary and metrics in report.json: what `convgate check` needs to re-judge a result
// without the tensors. Histograms are sparse (non-empty buckets only) with exact min, max and
// counts, so a million-element output costs a few hundred buckets.
#include <algorithm>

#include "json_util.h"
#include "policy_json.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

json HistogramJson(const compare::ErrorHistogram& histogram) {
  json buckets = json::array();
  for (const auto& [bucket, count] : histogram.Sparse()) buckets.push_back({bucket, count});
  return json{{"count", histogram.count()},
              {"min", Number(histogram.min())},
              {"max", Number(histogram.max())},
              {"buckets", buckets}};
}

json JointJson(const compare::JointHistogram& histogram) {
  json cells = json::array();
  for (const compare::JointHistogram::Cell& cell : histogram.Sparse()) {
    cells.push_back({cell.source_bucket, cell.error_bucket, cell.count});
  }
  return json{{"count", histogram.count()}, {"cells", cells}};
}

// Each element of `key` as an array of `width` integers.
std::vector<std::vector<int64_t>> Rows(const JsonFields& json, std::string_view key, size_t width) {
  const nlohmann::json& array = json.Raw(key);
  if (!array.is_array()) json.Fail(key, "expected an array");
  std::vector<std::vector<int64_t>> rows;
  for (const nlohmann::json& row : array) {
    const bool ok = row.is_array() && row.size() == width &&
                    std::all_of(row.begin(), row.end(), [](const nlohmann::json& item) {
                      return item.is_number_integer();
                    });
    if (!ok)
      json.Fail(key, "expected rows of " + std::to_string(width) + " integers, got " + row.dump());
    rows.push_back(row.get<std::vector<int64_t>>());
  }
  return rows;
}

compare::ErrorHistogram HistogramFromJson(const JsonFields& json) {
  std::vector<std::pair<int32_t, int64_t>> buckets;
  for (const std::vector<int64_t>& row : Rows(json, "buckets", 2)) {
    buckets.emplace_back(static_cast<int32_t>(row[0]), row[1]);
  }
  Result<compare::ErrorHistogram> histogram =
      compare::ErrorHistogram::FromSparse(buckets, json.Number("min"), json.Number("max"));
  if (!histogram.ok()) json.Fail("buckets", histogram.status().message());
  if (histogram->count() != json.Int("count")) json.Fail("count", "disagrees with the buckets");
  return std::move(histogram).value();
}

compare::JointHistogram JointFromJson(const JsonFields& json) {
  std::vector<compare::JointHistogram::Cell> cells;
  for (const std::vector<int64_t>& row : Rows(json, "cells", 3)) {
    cells.push_back({static_cast<int32_t>(row[0]), static_cast<int32_t>(row[1]), row[2]});
  }
  Result<compare::JointHistogram> histogram = compare::JointHistogram::FromSparse(cells);
  if (!histogram.ok()) json.Fail("cells", histogram.status().message());
  if (histogram->count() != json.Int("count")) json.Fail("count", "disagrees with the cells");
  return std::move(histogram).value();
}

}  // namespace

json MetricsJson(const compare::Metrics& metrics) {
  return json{{"rmse", Number(metrics.rmse)},       {"nmse", Number(metrics.nmse)},
              {"cosine", Number(metrics.cosine)},   {"snr_db", Number(metrics.snr_db)},
              {"psnr_db", Number(metrics.psnr_db)}, {"peak", Number(metrics.peak)}};
}

compare::Metrics MetricsFromJson(const JsonFields& json) {
  compare::Metrics metrics;
  metrics.rmse = json.Number("rmse");
  metrics.nmse = json.Number("nmse");
  metrics.cosine = json.Number("cosine");
  metrics.snr_db = json.Number("snr_db");
  metrics.psnr_db = json.Number("psnr_db");
  metrics.peak = json.Number("peak");
  return metrics;
}

json ErrorSummaryJson(const compare::ErrorSummary& summary) {
  return json{{"abs_error", HistogramJson(summary.abs_error)},
              {"rel_error", HistogramJson(summary.rel_error)},
              {"joint", JointJson(summary.joint)}};
}

compare::ErrorSummary ErrorSummaryFromJson(const JsonFields& json) {
  compare::ErrorSummary summary;
  summary.abs_error = HistogramFromJson(json.Object("abs_error"));
  summary.rel_error = HistogramFromJson(json.Object("rel_error"));
  summary.joint = JointFromJson(json.Object("joint"));
  return summary;
}

json ErrorSummaryResolutionJson() {
  return json{
      {"abs_error_and_rel_error",
       "log-linear histograms, " + std::to_string(1 << compare::kHistogramSubBits) +
           " buckets per octave, with exact count, min and max: a percentile read from them is "
           "bracketed within 1/64 (1.6%) of its value"},
      {"joint",
       "(|source|, |target - source|) cells, " + std::to_string(1 << compare::kJointSubBits) +
           " per octave on each axis (1/4 octave): the number of elements outside a new atol / "
           "rtol is bracketed by the cells its boundary crosses"},
      {"exact",
       "max and mean errors, cosine, SNR, the stored percentiles (p50, p75, p90, p99, p99.5 of "
       "|diff|) and mismatch counts at the original atol / rtol"}};
}

}  // namespace convgate::report::internal
