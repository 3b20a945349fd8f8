#include "convgate/compare/agreement.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace convgate::compare {
namespace {

// One row's reading for top-1 and the flip margin.
struct RowTop {
  int64_t argmax = 0;
  double top1 = 0.0;
  double top2 = 0.0;  // the best score at any other index; -Inf when there is one class
};

bool HasNaN(const std::vector<double>& row) {
  return std::any_of(row.begin(), row.end(), [](double v) { return std::isnan(v); });
}

// numpy.argmax semantics: the first maximal element wins. REQUIRES: no NaN, !row.empty().
RowTop TopOf(const std::vector<double>& row) {
  RowTop top{0, row[0], -std::numeric_limits<double>::infinity()};
  for (size_t idx = 1; idx < row.size(); ++idx) {
    if (row[idx] > top.top1) {
      top.top2 = top.top1;
      top.top1 = row[idx];
      top.argmax = static_cast<int64_t>(idx);
    } else if (row[idx] > top.top2) {
      top.top2 = row[idx];
    }
  }
  return top;
}

// The source's top-1 lead over its runner-up. Equal scores give 0 even when both are +Inf (where
// the subtraction would give NaN); a single class has no runner-up, so its lead is infinite.
double Margin(const RowTop& top) {
  if (top.top1 == top.top2) return 0.0;
  return top.top1 - top.top2;
}

// 0-based position of `idx` when `row` is ordered by descending score, ties by ascending index
// (the order numpy.argmax implies): idx is in the top k exactly when the rank is < k.
int64_t RankOf(const std::vector<double>& row, int64_t idx) {
  const double value = row[static_cast<size_t>(idx)];
  int64_t rank = 0;
  for (size_t other = 0; other < row.size(); ++other) {
    const bool before =
        row[other] > value || (row[other] == value && other < static_cast<size_t>(idx));
    rank += before ? 1 : 0;
  }
  return rank;
}

void ReadRow(const Tensor& tensor, int64_t offset, int64_t classes, std::vector<double>& out) {
  out.resize(static_cast<size_t>(classes));
  if (!tensor.IsAligned()) {  // an .npz member read in place: GetDouble reads any address
    for (int64_t idx = 0; idx < classes; ++idx) out[idx] = tensor.GetDouble(offset + idx);
    return;
  }
  if (tensor.dtype() == DType::kFloat32) {
    const float* data = tensor.data<float>().data() + offset;
    for (int64_t idx = 0; idx < classes; ++idx) out[idx] = data[idx];
    return;
  }
  if (tensor.dtype() == DType::kFloat64) {
    const double* data = tensor.data<double>().data() + offset;
    std::copy(data, data + classes, out.begin());
    return;
  }
  for (int64_t idx = 0; idx < classes; ++idx) out[idx] = tensor.GetDouble(offset + idx);
}

template <typename T>
void AppendLabels(const Tensor& tensor, std::vector<int64_t>& out) {
  // uint64 labels above INT64_MAX wrap; no classifier has that many classes. memcpy: the tensor
  // need not be aligned (an .npz member read in place).
  const std::byte* data = tensor.bytes().data();
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
    T value;
    std::memcpy(&value, data + static_cast<size_t>(idx) * sizeof(T), sizeof(T));
    out.push_back(static_cast<int64_t>(value));
  }
}

std::vector<int64_t> LabelsOf(const Tensor& tensor) {
  std::vector<int64_t> labels;
  labels.reserve(static_cast<size_t>(tensor.num_elements()));
  switch (tensor.dtype()) {
    case DType::kInt8:
      AppendLabels<int8_t>(tensor, labels);
      break;
    case DType::kInt16:
      AppendLabels<int16_t>(tensor, labels);
      break;
    case DType::kInt32:
      AppendLabels<int32_t>(tensor, labels);
      break;
    case DType::kInt64:
      AppendLabels<int64_t>(tensor, labels);
      break;
    case DType::kUInt8:
    case DType::kBool:  // one byte, 0 or 1
      AppendLabels<uint8_t>(tensor, labels);
      break;
    case DType::kUInt16:
      AppendLabels<uint16_t>(tensor, labels);
      break;
    case DType::kUInt32:
      AppendLabels<uint32_t>(tensor, labels);
      break;
    case DType::kUInt64:
      AppendLabels<uint64_t>(tensor, labels);
      break;
    default:
      break;
  }
  return labels;
}

bool IsLabelDType(DType dtype) { return IsInteger(dtype) || dtype == DType::kBool; }

std::string PairText(const Tensor& source, const Tensor& target) {
  return "source " + source.Describe() + ", target " + target.Describe();
}

double Fraction(int64_t part, int64_t whole) {
  return whole == 0 ? 1.0 : static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace

std::string_view PredictionKindName(PredictionKind kind) {
  return kind == PredictionKind::kScores ? "scores" : "labels";
}

double AgreementStats::Top1() const { return Fraction(top1_agree, rows); }

int64_t AgreementStats::TopKAgree(int k) const {
  if (k == 1) return top1_agree;
  for (const auto& [counted_k, agree] : top_k_agree) {
    if (counted_k == k) return agree;
  }
  return -1;
}

double AgreementStats::TopK(int k) const {
  const int64_t agree = TopKAgree(k);
  return agree < 0 ? -1.0 : Fraction(agree, rows);
}

double AgreementStats::FlipRate() const {
  return margin_rows == 0 ? 0.0 : static_cast<double>(flips) / static_cast<double>(margin_rows);
}

bool AgreementStats::IsDiagonal() const { return off_diagonal.empty() && nan_rows == 0; }

int64_t AgreementStats::OffDiagonalRows() const {
  int64_t total = 0;
  for (const ConfusionCell& cell : off_diagonal) total += cell.count;
  return total;
}

std::vector<int64_t> AgreementStats::Labels() const {
  std::vector<int64_t> labels;
  for (const auto& [label, count] : diagonal) labels.push_back(label);
  for (const ConfusionCell& cell : off_diagonal) {
    labels.push_back(cell.source);
    labels.push_back(cell.target);
  }
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  return labels;
}

AgreementAccumulator::AgreementAccumulator(PredictionKind kind, AgreementOptions options)
    : kind_(kind), options_(std::move(options)) {
  for (int k : options_.top_k) {
    if (k > 1) ks_.push_back(k);
  }
  std::sort(ks_.begin(), ks_.end());
  ks_.erase(std::unique(ks_.begin(), ks_.end()), ks_.end());
  top_k_hits_.assign(ks_.size(), 0);
  stats_.kind = kind;
  stats_.flip_margin = options_.flip_margin;
}

Status AgreementAccumulator::Add(const Tensor& source, const Tensor& target) {
  return kind_ == PredictionKind::kScores ? AddScores(source, target) : AddLabels(source, target);
}

Status AgreementAccumulator::AddScores(const Tensor& source, const Tensor& target) {
  if (!IsFloating(source.dtype()) || !IsFloating(target.dtype())) {
    return Status::InvalidArgument("class scores must be floating tensors; " +
                                   PairText(source, target));
  }
  if (source.shape().rank() == 0 || !(source.shape() == target.shape())) {
    return Status::InvalidArgument(
        "class scores need the same shape on both sides, with the classes on the last axis; " +
        PairText(source, target));
  }
  const int64_t classes = source.shape().dim(source.shape().rank() - 1);
  if (has_classes_ && classes != stats_.classes) {
    return Status::InvalidArgument("the class axis has " + std::to_string(classes) +
                                   " entries, earlier samples had " +
                                   std::to_string(stats_.classes));
  }
  stats_.classes = classes;
  has_classes_ = true;
  if (classes == 0) return Status::OK();  // no class, no prediction
  for (int64_t offset = 0; offset < source.num_elements(); offset += classes) {
    ReadRow(source, offset, classes, source_row_);
    ReadRow(target, offset, classes, target_row_);
    AddScoreRow(source_row_, target_row_);
  }
  return Status::OK();
}

void AgreementAccumulator::AddScoreRow(const std::vector<double>& source,
                                       const std::vector<double>& target) {
  ++stats_.rows;
  if (HasNaN(source) || HasNaN(target)) {
    ++stats_.nan_rows;
    ++stats_.margin_rows;
    ++stats_.flips;
    return;
  }
  const RowTop source_top = TopOf(source);
  const int64_t rank = RankOf(target, source_top.argmax);
  for (size_t k_idx = 0; k_idx < ks_.size(); ++k_idx) {
    top_k_hits_[k_idx] += rank < ks_[k_idx] ? 1 : 0;
  }
  // Rank 0 means the source's top-1 is the target's argmax (ties resolved by index on both).
  const bool agree = rank == 0;
  stats_.top1_agree += agree ? 1 : 0;
  if (Margin(source_top) > options_.flip_margin) {
    ++stats_.margin_rows;
    stats_.flips += agree ? 0 : 1;
  }
  CountPair(source_top.argmax, agree ? source_top.argmax : TopOf(target).argmax);
}

Status AgreementAccumulator::AddLabels(const Tensor& source, const Tensor& target) {
  if (!IsLabelDType(source.dtype()) || !IsLabelDType(target.dtype())) {
    return Status::InvalidArgument("labels must be integer or bool tensors; " +
                                   PairText(source, target));
  }
  if (source.num_elements() != target.num_elements()) {
    return Status::InvalidArgument("labels need the same element count on both sides; " +
                                   PairText(source, target));
  }
  const std::vector<int64_t> source_labels = LabelsOf(source);
  const std::vector<int64_t> target_labels = LabelsOf(target);
  for (size_t idx = 0; idx < source_labels.size(); ++idx) {
    const bool agree = source_labels[idx] == target_labels[idx];
    ++stats_.rows;
    stats_.top1_agree += agree ? 1 : 0;
    for (int64_t& hits : top_k_hits_) hits += agree ? 1 : 0;
    ++stats_.margin_rows;
    stats_.flips += agree ? 0 : 1;
    CountPair(source_labels[idx], target_labels[idx]);
  }
  return Status::OK();
}

void AgreementAccumulator::CountPair(int64_t source_label, int64_t target_label) {
  if (source_label == target_label) {
    ++stats_.diagonal[source_label];
  } else {
    ++off_diagonal_[{source_label, target_label}];
  }
}

AgreementStats AgreementAccumulator::Stats() const {
  AgreementStats stats = stats_;
  for (size_t k_idx = 0; k_idx < ks_.size(); ++k_idx) {
    stats.top_k_agree.emplace_back(ks_[k_idx], top_k_hits_[k_idx]);
  }
  for (const auto& [pair, count] : off_diagonal_) {
    stats.off_diagonal.push_back({pair.first, pair.second, count});
  }
  // Most frequent first; the map already ordered equal counts by (source, target).
  std::stable_sort(
      stats.off_diagonal.begin(), stats.off_diagonal.end(),
      [](const ConfusionCell& a, const ConfusionCell& b) { return a.count > b.count; });
  if (kind_ == PredictionKind::kLabels) stats.classes = static_cast<int64_t>(stats.Labels().size());
  return stats;
}

}  // namespace convgate::compare
