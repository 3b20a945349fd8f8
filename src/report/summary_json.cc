// The error summary and metrics in report.json: what `convgate check` needs to re-judge a result
// without the tensors (compare/error_summary.h). A summary's size is bounded whatever the tensor's:
// at most kMaxFrontierPoints points, one rung per ladder percentile and kMaxJointCells cells (more
// only when even one-octave cells are more), all written as flat integer arrays.
#include <algorithm>
#include <limits>

#include "json_util.h"
#include "policy_json.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

// Compact integer encodings: one flat array each, differences where values are sorted, so a summary
// costs a few bytes per stored number (README "Result files").

// A ladder's buckets as the first one then differences to the previous one (never negative).
json LadderJson(const compare::QuantileLadder& ladder) {
  json buckets = json::array();
  int32_t previous = 0;
  for (int32_t bucket : ladder.buckets()) {
    buckets.push_back(bucket - previous);
    previous = bucket;
  }
  return json{{"count", ladder.count()},
              {"min", Number(ladder.min())},
              {"max", Number(ladder.max())},
              {"ladder", buckets}};
}

// Points as (source bucket, error bucket) pairs, each coordinate a difference to the previous
// point's (source buckets ascend; error buckets may fall).
json FrontierJson(const compare::Frontier& frontier) {
  json points = json::array();
  compare::Frontier::Point previous{0, 0};
  for (const compare::Frontier::Point& point : frontier.points()) {
    points.push_back(point.source_bucket - previous.source_bucket);
    points.push_back(point.error_bucket - previous.error_bucket);
    previous = point;
  }
  return json{{"depth", frontier.depth()},
              {"complete", frontier.complete()},
              {"count", frontier.count()},
              {"points", points}};
}

// A gap of more zero cells than this in a row starts a new run rather than writing the zeros.
constexpr int32_t kMaxInlineZeros = 2;

// Cells as runs along the error axis: [source bucket step, first error bucket, n, n counts], the
// step from the previous run's source bucket (0: same row). Zero counts fill short gaps in a run.
json JointJson(const compare::JointCells& joint) {
  json runs = json::array();
  const std::vector<compare::JointHistogram::Cell>& cells = joint.cells();
  int32_t previous_row = 0;
  for (size_t begin = 0; begin < cells.size();) {
    size_t end = begin + 1;
    while (end < cells.size() && cells[end].source_bucket == cells[begin].source_bucket &&
           cells[end].error_bucket - cells[end - 1].error_bucket <= kMaxInlineZeros + 1) {
      ++end;
    }
    const int32_t first = cells[begin].error_bucket;
    runs.push_back(cells[begin].source_bucket - previous_row);
    runs.push_back(first);
    runs.push_back(cells[end - 1].error_bucket - first + 1);
    for (size_t idx = begin; idx < end; ++idx) {
      for (int32_t zero = idx == begin ? first : cells[idx - 1].error_bucket + 1;
           zero < cells[idx].error_bucket; ++zero) {
        runs.push_back(0);
      }
      runs.push_back(cells[idx].count);
    }
    previous_row = cells[begin].source_bucket;
    begin = end;
  }
  return json{
      {"quarter_octaves_per_cell", joint.width()}, {"count", joint.count()}, {"cells", runs}};
}

// An array member of integers.
std::vector<int64_t> Integers(const JsonFields& json, std::string_view key) {
  const nlohmann::json& array = json.Raw(key);
  const bool ok = array.is_array() && std::all_of(array.begin(), array.end(), [](const auto& item) {
                    return item.is_number_integer();
                  });
  if (!ok) json.Fail(key, "expected an array of integers");
  return array.get<std::vector<int64_t>>();
}

int32_t Bucket(const JsonFields& json, std::string_view key, int64_t value) {
  if (value < 0 || value > std::numeric_limits<int32_t>::max()) {
    json.Fail(key, "bucket " + std::to_string(value) + " out of range");
  }
  return static_cast<int32_t>(value);
}

template <typename T>
T Checked(const JsonFields& json, std::string_view key, Result<T> value) {
  if (!value.ok()) json.Fail(key, value.status().message());
  return std::move(value).value();
}

// `repeated`: the count and max the ladder leaves out when they repeat the result's errors.
compare::QuantileLadder LadderFromJson(const JsonFields& json, int64_t count, double max) {
  std::vector<int32_t> buckets;
  int64_t bucket = 0;
  for (int64_t step : Integers(json, "ladder")) {
    if (step < 0) json.Fail("ladder", "buckets must ascend");
    buckets.push_back(Bucket(json, "ladder", bucket += step));
  }
  return Checked(json, "ladder",
                 compare::QuantileLadder::FromStored(
                     json.CountOr("count", count), json.Number("min"),
                     json.OptionalNumber("max").value_or(max), std::move(buckets)));
}

compare::Frontier FrontierFromJson(const JsonFields& json, int64_t count) {
  const std::vector<int64_t> steps = Integers(json, "points");
  if (steps.size() % 2 != 0) json.Fail("points", "expected (source, error) pairs");
  std::vector<compare::Frontier::Point> points;
  int64_t source = 0;
  int64_t error = 0;
  for (size_t idx = 0; idx < steps.size(); idx += 2) {
    source += steps[idx];
    error += steps[idx + 1];
    points.push_back({Bucket(json, "points", source), Bucket(json, "points", error)});
  }
  const int64_t depth = json.Int("depth");
  if (depth < 0 || depth > 1 << 20) json.Fail("depth", "out of range");
  return Checked(json, "points",
                 compare::Frontier::FromStored(static_cast<int>(depth), json.Bool("complete"),
                                               json.CountOr("count", count), std::move(points)));
}

compare::JointCells JointFromJson(const JsonFields& json) {
  const std::vector<int64_t> runs = Integers(json, "cells");
  std::vector<compare::JointHistogram::Cell> cells;
  int64_t row = 0;
  for (size_t at = 0; at < runs.size();) {
    if (at + 3 > runs.size() || runs[at + 2] <= 0 ||
        runs[at + 2] > static_cast<int64_t>(runs.size() - at - 3)) {
      json.Fail("cells", "truncated run at element " + std::to_string(at));
    }
    row += runs[at];
    const int64_t first = runs[at + 1];
    const int64_t length = runs[at + 2];
    for (int64_t offset = 0; offset < length; ++offset) {
      const int64_t count = runs[at + 3 + static_cast<size_t>(offset)];
      if (count < 0) json.Fail("cells", "negative count");
      if (count == 0) continue;
      cells.push_back({Bucket(json, "cells", row), Bucket(json, "cells", first + offset), count});
    }
    at += 3 + static_cast<size_t>(length);
  }
  compare::JointCells joint =
      Checked(json, "cells",
              compare::JointCells::FromStored(
                  static_cast<int>(json.Int("quarter_octaves_per_cell")), cells));
  if (json.Has("count") && joint.count() != json.Int("count")) {
    json.Fail("count", "disagrees with the cells");
  }
  return joint;
}

// Schema 1 wrote whole histograms: [bucket, count] pairs and [source, error, count] cells. Read
// back, they give the ladders and cells of schema 2; there is no frontier.
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

compare::QuantileLadder LadderFromHistogramJson(const JsonFields& json) {
  std::vector<std::pair<int32_t, int64_t>> buckets;
  for (const std::vector<int64_t>& row : Rows(json, "buckets", 2)) {
    buckets.emplace_back(Bucket(json, "buckets", row[0]), row[1]);
  }
  const compare::ErrorHistogram histogram =
      Checked(json, "buckets",
              compare::ErrorHistogram::FromSparse(buckets, json.Number("min"), json.Number("max")));
  if (histogram.count() != json.Int("count")) json.Fail("count", "disagrees with the buckets");
  return compare::QuantileLadder::Of(histogram);
}

compare::JointCells JointFromHistogramJson(const JsonFields& json) {
  std::vector<compare::JointHistogram::Cell> cells;
  for (const std::vector<int64_t>& row : Rows(json, "cells", 3)) {
    cells.push_back({Bucket(json, "cells", row[0]), Bucket(json, "cells", row[1]), row[2]});
  }
  const compare::JointHistogram histogram =
      Checked(json, "cells", compare::JointHistogram::FromSparse(cells));
  if (histogram.count() != json.Int("count")) json.Fail("count", "disagrees with the cells");
  return compare::JointCells::Of(histogram);
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
  json out{{"frontier", FrontierJson(summary.frontier)}};
  // A complete frontier holds every pair; the ladders and cells are then empty (error_summary.h).
  if (summary.frontier.complete()) return out;
  out["abs_error"] = LadderJson(summary.abs_error);
  out["rel_error"] = LadderJson(summary.rel_error);
  out["joint"] = JointJson(summary.joint);
  return out;
}

void LeaveOutWhatErrorsRepeat(const json& errors, json& summary) {
  for (const char* part : {"frontier", "abs_error", "rel_error", "joint"}) {
    if (summary.contains(part) && summary[part]["count"] == errors["compared"]) {
      summary[part].erase("count");
    }
  }
  for (const auto& [part, max] :
       {std::pair{"abs_error", "max_abs_error"}, std::pair{"rel_error", "max_rel_error"}}) {
    if (summary.contains(part) && summary[part]["max"] == errors[max]) summary[part].erase("max");
  }
}

compare::ErrorSummary ErrorSummaryFromJson(const JsonFields& json,
                                           const compare::ErrorStats& errors) {
  compare::ErrorSummary summary;
  if (!json.Has("frontier")) {  // schema 1
    summary.abs_error = LadderFromHistogramJson(json.Object("abs_error"));
    summary.rel_error = LadderFromHistogramJson(json.Object("rel_error"));
    summary.joint = JointFromHistogramJson(json.Object("joint"));
    return summary;
  }
  summary.frontier = FrontierFromJson(json.Object("frontier"), errors.compared);
  if (summary.frontier.complete()) return summary;
  summary.abs_error =
      LadderFromJson(json.Object("abs_error"), errors.compared, errors.max_abs_error);
  summary.rel_error =
      LadderFromJson(json.Object("rel_error"), errors.compared, errors.max_rel_error);
  summary.joint = JointFromJson(json.Object("joint"));
  return summary;
}

json ErrorSummaryResolutionJson() {
  return json{
      {"frontier",
       "the (|source|, |target - source|) pairs fewer than `depth` others dominate, at most " +
           std::to_string(compare::kMaxFrontierPoints) + ", each in a box 1/" +
           std::to_string(1 << compare::kFrontierSubBits) +
           " octave wide: counts under any atol / rtol exactly while fewer than `depth` pairs "
           "fall outside, and the tolerances every pair would pass"},
      {"abs_error_and_rel_error",
       "quantile ladders: the values at the ranks of percentiles 1 to 99.99, each within its "
       "1/64-octave (1.6%) bucket; other percentiles lie between two rungs"},
      {"joint",
       "(|source|, |target - source|) counts in cells of 1/4 octave (up to 4 octaves when more "
       "than " +
           std::to_string(compare::kMaxJointCells) +
           " cells): counts under a new atol / rtol when more pairs fall outside than the frontier "
           "is deep, bracketed by the cells the boundary crosses"},
      {"exact",
       "max and mean errors, cosine, SNR, the stored percentiles (p50, p75, p90, p99, p99.5 of "
       "|diff|) and mismatch counts at the original atol / rtol"}};
}

}  // namespace convgate::report::internal
