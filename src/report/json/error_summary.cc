#include "report/json/error_summary.h"

#include <algorithm>
#include <limits>
#include <string>

namespace convgate::report::internal {

using nlohmann::json;

namespace {

// A gap of more zero cells than this in a row starts a new run rather than writing the zeros.
constexpr int32_t kMaxInlineZeros = 2;

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

StoredLadder ToStored(const compare::QuantileLadder& ladder) {
  StoredLadder stored{ladder.count(), ladder.min(), ladder.max(), {}};
  int32_t previous = 0;
  for (int32_t bucket : ladder.buckets()) {
    stored.steps.push_back(bucket - previous);
    previous = bucket;
  }
  return stored;
}

compare::QuantileLadder FromStored(const StoredLadder& stored, const JsonFields& json) {
  std::vector<int32_t> buckets;
  int64_t bucket = 0;
  for (int64_t step : stored.steps) {
    if (step < 0) json.Fail("ladder", "buckets must ascend");
    buckets.push_back(Bucket(json, "ladder", bucket += step));
  }
  return Checked(json, "ladder",
                 compare::QuantileLadder::FromStored(stored.count, stored.min, stored.max,
                                                     std::move(buckets)));
}

StoredFrontier ToStored(const compare::Frontier& frontier) {
  StoredFrontier stored{frontier.depth(), frontier.complete(), frontier.count(), {}};
  compare::Frontier::Point previous{0, 0};
  for (const compare::Frontier::Point& point : frontier.points()) {
    stored.steps.push_back(point.source_bucket - previous.source_bucket);
    stored.steps.push_back(point.error_bucket - previous.error_bucket);
    previous = point;
  }
  return stored;
}

compare::Frontier FromStored(const StoredFrontier& stored, const JsonFields& json) {
  if (stored.steps.size() % 2 != 0) json.Fail("points", "expected (source, error) pairs");
  std::vector<compare::Frontier::Point> points;
  int64_t source = 0;
  int64_t error = 0;
  for (size_t idx = 0; idx < stored.steps.size(); idx += 2) {
    source += stored.steps[idx];
    error += stored.steps[idx + 1];
    points.push_back({Bucket(json, "points", source), Bucket(json, "points", error)});
  }
  if (stored.depth < 0 || stored.depth > 1 << 20) json.Fail("depth", "out of range");
  return Checked(json, "points",
                 compare::Frontier::FromStored(static_cast<int>(stored.depth), stored.complete,
                                               stored.count, std::move(points)));
}

StoredJoint ToStored(const compare::JointCells& joint) {
  StoredJoint stored{joint.width(), joint.count(), {}};
  const std::vector<compare::JointHistogram::Cell>& cells = joint.cells();
  int32_t previous_row = 0;
  for (size_t begin = 0; begin < cells.size();) {
    size_t end = begin + 1;
    while (end < cells.size() && cells[end].source_bucket == cells[begin].source_bucket &&
           cells[end].error_bucket - cells[end - 1].error_bucket <= kMaxInlineZeros + 1) {
      ++end;
    }
    const int32_t first = cells[begin].error_bucket;
    stored.runs.push_back(cells[begin].source_bucket - previous_row);
    stored.runs.push_back(first);
    stored.runs.push_back(cells[end - 1].error_bucket - first + 1);
    for (size_t idx = begin; idx < end; ++idx) {
      for (int32_t zero = idx == begin ? first : cells[idx - 1].error_bucket + 1;
           zero < cells[idx].error_bucket; ++zero) {
        stored.runs.push_back(0);
      }
      stored.runs.push_back(cells[idx].count);
    }
    previous_row = cells[begin].source_bucket;
    begin = end;
  }
  return stored;
}

compare::JointCells FromStored(const StoredJoint& stored, const JsonFields& json) {
  const std::vector<int64_t>& runs = stored.runs;
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
  compare::JointCells joint = Checked(
      json, "cells", compare::JointCells::FromStored(static_cast<int>(stored.width), cells));
  if (stored.count >= 0 && joint.count() != stored.count) {
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

StoredSummary ToStored(const compare::ErrorSummary& summary) {
  return {ToStored(summary.frontier), ToStored(summary.abs_error), ToStored(summary.rel_error),
          ToStored(summary.joint)};
}

compare::ErrorSummary FromStored(const StoredSummary& stored, const JsonFields& json) {
  compare::ErrorSummary summary;
  summary.frontier = FromStored(stored.frontier, json.Object("frontier"));
  if (summary.frontier.complete()) return summary;
  summary.abs_error = FromStored(stored.abs_error, json.Object("abs_error"));
  summary.rel_error = FromStored(stored.rel_error, json.Object("rel_error"));
  summary.joint = FromStored(stored.joint, json.Object("joint"));
  return summary;
}

compare::ErrorSummary SummaryFromSchema1(const JsonFields& json) {
  compare::ErrorSummary summary;
  summary.abs_error = LadderFromHistogramJson(json.Object("abs_error"));
  summary.rel_error = LadderFromHistogramJson(json.Object("rel_error"));
  summary.joint = JointFromHistogramJson(json.Object("joint"));
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
