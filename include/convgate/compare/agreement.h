// Classifier agreement between a source and a target: do they predict the same classes?
//
// ONNX Runtime's conversion validation compares the predicted labels of the source and the
// converted model with a confusion matrix that must be diagonal
// (docs/architecture.md). An elementwise tolerance answers a
// different question: a 1e-3 difference in a logit matters only when it changes a prediction, and a
// prediction can change under any tolerance when two classes are nearly tied. This module counts
// what a classifier's user sees: top-1 / top-k agreement, flips, and the confusion matrix.
//
// An AgreementAccumulator is fed (source, target) pairs of one output, one sample at a time, and
// aggregates over every sample and every row:
//   scores: a floating tensor whose last axis holds the classes. Rank 1 is one row; rank 2 is
//           [rows, classes]; at higher ranks every leading axis is a row axis.
//   labels: an integer (or bool) tensor of any shape; every element is one predicted label.
// Not thread-safe; one accumulator per output.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::compare {

enum class PredictionKind { kScores, kLabels };
std::string_view PredictionKindName(PredictionKind kind);  // "scores", "labels"

struct AgreementOptions {
  // Top-k agreement is counted for k = 1 and for every k listed here (duplicates and 1 are
  // ignored). 5 is the ImageNet convention and what `--top-k` defaults to.
  std::vector<int> top_k = {5};
  // A row counts toward the flip rate only when the source's top-1 score exceeds its runner-up by
  // more than this. With the default 0 every row whose source top-1 is unique counts; an exact
  // source tie (margin 0) never does, because argmax then picks by index, not by the model.
  // A label output has no margin: every element counts.
  double flip_margin = 0.0;
};

// One off-diagonal cell of the confusion matrix: `count` rows that the source predicted as
// `source` and the target as `target`.
struct ConfusionCell {
  int64_t source = 0;
  int64_t target = 0;
  int64_t count = 0;
};

struct AgreementStats {
  PredictionKind kind = PredictionKind::kScores;
  // Scores: the size of the class axis. Labels: the number of distinct labels either side
  // predicted.
  int64_t classes = 0;
  int64_t rows = 0;
  // Rows with the same top-1 on both sides (numpy.argmax: the lowest index wins a tie).
  int64_t top1_agree = 0;
  // (k, rows whose source top-1 is within the target's top k), ascending k, k = 1 excluded. A
  // target tie is ordered by index, as for top-1. k >= classes makes every row without NaN agree.
  // A label output has one prediction per element, so its top-k equals its top-1.
  std::vector<std::pair<int, int64_t>> top_k_agree;
  double flip_margin = 0.0;
  int64_t margin_rows = 0;  // rows whose source margin exceeds flip_margin: the flip denominator
  int64_t flips = 0;        // of those, rows whose top-1 differs
  // Rows with NaN on either side. Such a row has no label: it counts as a disagreement in top-1,
  // top-k and the flips (whatever its margin, so a NaN never passes a flip check) and stays out of
  // the confusion matrix, which is then not diagonal.
  int64_t nan_rows = 0;
  // The confusion matrix, sparse: diagonal[label] = rows both sides predicted as label; the
  // off-diagonal cells sorted by count (descending), then source, then target label.
  std::map<int64_t, int64_t> diagonal;
  std::vector<ConfusionCell> off_diagonal;

  double Top1() const;  // top1_agree / rows; 1 when there are no rows
  // Rows agreeing within the top k (top1_agree for k = 1); -1 when k was not counted.
  int64_t TopKAgree(int k) const;
  double TopK(int k) const;  // TopKAgree(k) / rows; 1 when there are no rows; -1 when not counted
  double FlipRate() const;   // flips / margin_rows; 0 when no row has a margin
  // No off-diagonal cell and no NaN row: every row got the same label on both sides.
  bool IsDiagonal() const;
  int64_t OffDiagonalRows() const;
  // Every label either side predicted, ascending (the dense matrix's row and column order).
  std::vector<int64_t> Labels() const;
};

class AgreementAccumulator {
 public:
  AgreementAccumulator(PredictionKind kind, AgreementOptions options);

  // Adds one sample's pair. InvalidArgument, naming the dtypes and shapes, when the pair cannot be
  // read as `kind`: scores need floating tensors of the same shape, rank >= 1 and the same class
  // count as earlier samples; labels need integer or bool tensors with the same element count.
  // Nothing is added on error.
  Status Add(const Tensor& source, const Tensor& target);

  // The counts so far (the confusion matrix's off-diagonal cells sorted).
  AgreementStats Stats() const;

 private:
  Status AddScores(const Tensor& source, const Tensor& target);
  Status AddLabels(const Tensor& source, const Tensor& target);
  void AddScoreRow(const std::vector<double>& source, const std::vector<double>& target);
  void CountPair(int64_t source_label, int64_t target_label);

  PredictionKind kind_;
  AgreementOptions options_;
  std::vector<int> ks_;       // sorted, unique, each > 1
  bool has_classes_ = false;  // stats_.classes is fixed by the first sample of scores
  AgreementStats stats_;
  std::vector<int64_t> top_k_hits_;  // parallel to ks_
  std::map<std::pair<int64_t, int64_t>, int64_t> off_diagonal_;
  std::vector<double> source_row_, target_row_;  // reused row buffers
};

}  // namespace convgate::compare
