// The error summary in report.json: what `convgate check` needs to re-judge a result without the
// tensors (compare/error_summary.h). A summary's size is bounded whatever the tensor's: at most
// kMaxFrontierPoints points, one rung per ladder percentile and kMaxJointCells cells (more only
// when even one-octave cells are more), all written as flat integer arrays.
#pragma once

#include <nlohmann/json.hpp>

#include "convgate/compare/error_summary.h"
#include "convgate/compare/tensor_compare.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

// The summary as written: its parts in their compact integer encodings (one flat array each,
// differences where values are sorted, so a summary costs a few bytes per stored number; docs/
// guide.md, "Result files"). A complete frontier holds every pair: the ladders and cells are then
// left out.
struct StoredLadder {
  int64_t count = 0;
  double min = 0.0;
  double max = 0.0;
  // The first bucket, then differences to the previous one (never negative).
  std::vector<int64_t> steps;
};
struct StoredFrontier {
  int64_t depth = 0;
  bool complete = false;
  int64_t count = 0;
  // (source bucket, error bucket) pairs, each coordinate a difference to the previous point's
  // (source buckets ascend; error buckets may fall).
  std::vector<int64_t> steps;
};
struct StoredJoint {
  int64_t width = 0;  // quarter octaves per cell
  int64_t count = 0;  // -1: left out (it is the result's compared), not checked
  // Runs along the error axis: [source bucket step, first error bucket, n, n counts], the step
  // from the previous run's source bucket (0: same row). Zero counts fill short gaps in a run.
  std::vector<int64_t> runs;
};
struct StoredSummary {
  StoredFrontier frontier;
  StoredLadder abs_error;
  StoredLadder rel_error;
  StoredJoint joint;
};

// The summary's encodings and back. FromStored throws BadField (at `json`) when they disagree.
StoredSummary ToStored(const compare::ErrorSummary& summary);
compare::ErrorSummary FromStored(const StoredSummary& stored, const JsonFields& json);
// Schema 1 wrote whole histograms ([bucket, count] pairs and [source, error, count] cells); read
// back, they give the ladders and cells of schema 2, without a frontier.
compare::ErrorSummary SummaryFromSchema1(const JsonFields& json);

// `errors`: the result's. The counts and maxima that repeat them are left out (schema 2: a report
// repeats them for every output of every sample) and read back from them.
template <typename Io, typename Ladder>
void LadderFields(Io& io, Ladder& ladder, int64_t compared, double max) {
  io.Count("count", ladder.count, Default(compared));
  io.Number("min", ladder.min);
  io.Number("max", ladder.max, Default(max));
  io.IntArray("ladder", ladder.steps);
}

template <typename Io, typename Summary>
void StoredSummaryFields(Io& io, Summary& summary, const compare::ErrorStats& errors) {
  io.Object("frontier", summary.frontier, [&](auto& part, auto& frontier) {
    part.Int("depth", frontier.depth);
    part.Bool("complete", frontier.complete);
    part.Count("count", frontier.count, Default(errors.compared));
    part.IntArray("points", frontier.steps);
  });
  if (summary.frontier.complete) return;
  io.Object("abs_error", summary.abs_error, [&](auto& part, auto& ladder) {
    LadderFields(part, ladder, errors.compared, errors.max_abs_error);
  });
  io.Object("rel_error", summary.rel_error, [&](auto& part, auto& ladder) {
    LadderFields(part, ladder, errors.compared, errors.max_rel_error);
  });
  io.Object("joint", summary.joint, [&](auto& part, auto& joint) {
    part.Int("quarter_octaves_per_cell", joint.width);
    part.Count("count", joint.count, LeftOutIf<int64_t>(joint.count == errors.compared, -1));
    part.IntArray("cells", joint.runs);
  });
}

// What report.json says about the error summary's resolution (docs/guide.md, "Re-judging").
nlohmann::json ErrorSummaryResolutionJson();

}  // namespace convgate::report::internal
