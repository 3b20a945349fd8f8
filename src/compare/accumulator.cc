#include "compare/accumulator.h"

#include <algorithm>
#include <cmath>

namespace convgate::compare::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The fields of Sums, so merging code is written once.
constexpr double Sums::*kSumFields[] = {
    &Sums::source,        &Sums::target,         &Sums::abs_error,      &Sums::rel_error,
    &Sums::squared_error, &Sums::squared_source, &Sums::squared_target, &Sums::dot,
};

// Tolerances that would have let this finite element pass (TensorComparison::atol_to_pass).
void AddToleranceToPass(double source, double abs_error, const Tolerance& tolerance,
                        Accumulator& acc) {
  const double magnitude = std::abs(source);
  acc.atol_to_pass = std::max(acc.atol_to_pass, abs_error - tolerance.rtol * magnitude);
  if (magnitude > 0.0) {
    acc.rtol_to_pass = std::max(acc.rtol_to_pass, (abs_error - tolerance.atol) / magnitude);
  } else if (abs_error > tolerance.atol) {
    acc.rtol_to_pass = kInf;
  }
}

void SetFirstIfEarlier(int64_t flat, int64_t& first) {
  if (flat >= 0 && (first < 0 || flat < first)) first = flat;
}

}  // namespace

void Sums::Add(const Sums& other) {
  for (double Sums::*field : kSumFields) this->*field += other.*field;
}

Sums MergeSums(std::span<const Sums> blocks) {
  Sums total;
  Sums compensation;  // Neumaier: the low-order parts lost by each addition, added back at the end
  for (const Sums& block : blocks) {
    for (double Sums::*field : kSumFields) {
      const double sum = total.*field + block.*field;
      compensation.*field += std::abs(total.*field) >= std::abs(block.*field)
                                 ? (total.*field - sum) + block.*field
                                 : (block.*field - sum) + total.*field;
      total.*field = sum;
    }
  }
  total.Add(compensation);
  return total;
}

void ValueAccumulator::Merge(const ValueAccumulator& other) {
  min = std::min(min, other.min);
  max = std::max(max, other.max);
  sum += other.sum;
  counts.finite += other.counts.finite;
  counts.nan += other.counts.nan;
  counts.pos_inf += other.counts.pos_inf;
  counts.neg_inf += other.counts.neg_inf;
}

bool WorstCandidate::Beats(const WorstCandidate& other) const {
  if (score != other.score) return score > other.score;
  if (abs_error != other.abs_error) return abs_error > other.abs_error;
  return flat >= 0 && (other.flat < 0 || flat < other.flat);
}

void Accumulator::Merge(const Accumulator& other) {
  source.Merge(other.source);
  target.Merge(other.target);
  NonFiniteSplit& split = non_finite;
  split.introduced_nan += other.non_finite.introduced_nan;
  split.introduced_inf += other.non_finite.introduced_inf;
  split.inherited += other.non_finite.inherited;
  split.shared_nan += other.non_finite.shared_nan;
  split.shared_inf += other.non_finite.shared_inf;
  SetFirstIfEarlier(other.non_finite.first_introduced, split.first_introduced);
  SetFirstIfEarlier(other.non_finite.first_introduced_nan, split.first_introduced_nan);
  SetFirstIfEarlier(other.non_finite.first_introduced_inf, split.first_introduced_inf);
  SetFirstIfEarlier(other.non_finite.first_inherited, split.first_inherited);
  compared += other.compared;
  zero_errors += other.zero_errors;
  max_rel_error = std::max(max_rel_error, other.max_rel_error);
  // Ties go to the lower index, as numpy.argmax.
  if (other.max_abs_error > max_abs_error ||
      (other.max_abs_error == max_abs_error && other.max_abs_flat >= 0 &&
       (max_abs_flat < 0 || other.max_abs_flat < max_abs_flat))) {
    max_abs_error = other.max_abs_error;
    max_abs_flat = other.max_abs_flat;
  }
  peak = std::max(peak, other.peak);
  histograms.abs_error.Merge(other.histograms.abs_error);
  histograms.rel_error.Merge(other.histograms.rel_error);
  histograms.joint.Merge(other.histograms.joint);
  value_mismatches += other.value_mismatches;
  if (other.worst_value.Beats(worst_value)) worst_value = other.worst_value;
  atol_to_pass = std::max(atol_to_pass, other.atol_to_pass);
  rtol_to_pass = std::max(rtol_to_pass, other.rtol_to_pass);
}

void AddValue(double value, ValueAccumulator& acc) {
  if (std::isnan(value)) {
    ++acc.counts.nan;
  } else if (value == kInf) {
    ++acc.counts.pos_inf;
  } else if (value == -kInf) {
    ++acc.counts.neg_inf;
  } else {
    ++acc.counts.finite;
    acc.min = std::min(acc.min, value);
    acc.max = std::max(acc.max, value);
    acc.sum += value;
  }
}

namespace {

// Statistics of one element where both sides are finite.
void AddError(double source, double target, double abs_error, int64_t flat, Accumulator& acc,
              Sums& sums) {
  const double magnitude = std::abs(source);
  const double rel_error = abs_error / std::max(magnitude, kRelErrorFloor);
  ++acc.compared;
  acc.zero_errors += abs_error == 0.0 ? 1 : 0;
  sums.abs_error += abs_error;
  sums.rel_error += rel_error;
  sums.squared_error += abs_error * abs_error;
  sums.squared_source += source * source;
  sums.squared_target += target * target;
  sums.dot += source * target;
  acc.max_rel_error = std::max(acc.max_rel_error, rel_error);
  // Strictly greater: ties keep the lower index, as numpy.argmax does.
  if (abs_error > acc.max_abs_error) {
    acc.max_abs_error = abs_error;
    acc.max_abs_flat = flat;
  }
  acc.peak = std::max(acc.peak, magnitude);
  acc.histograms.abs_error.Add(abs_error);
  acc.histograms.rel_error.Add(rel_error);
  acc.histograms.joint.Add(magnitude, abs_error);
}

void AddValueMismatch(double score, double abs_error, int64_t flat, Accumulator& acc) {
  ++acc.value_mismatches;
  const WorstCandidate candidate{flat, score, abs_error};
  if (candidate.Beats(acc.worst_value)) acc.worst_value = candidate;
}

void SetFirst(int64_t flat, int64_t& first) {
  if (first < 0) first = flat;
}

// Classifies an element where at least one side is NaN or Inf (NonFiniteSplit).
void AddNonFinite(double source, double target, int64_t flat, NonFiniteSplit& split) {
  if (std::isfinite(source)) {
    SetFirst(flat, split.first_introduced);
    if (std::isnan(target)) {
      ++split.introduced_nan;
      SetFirst(flat, split.first_introduced_nan);
    } else {
      ++split.introduced_inf;
      SetFirst(flat, split.first_introduced_inf);
    }
    return;
  }
  if (std::isnan(source) && std::isnan(target)) {
    ++split.shared_nan;
    return;
  }
  if (source == target) {  // the same infinity
    ++split.shared_inf;
    return;
  }
  ++split.inherited;
  SetFirst(flat, split.first_inherited);
}

}  // namespace

ValueSummary ValueAccumulator::Finish(double sum) const {
  ValueSummary summary = counts;
  if (counts.finite > 0) {
    summary.min = min;
    summary.max = max;
    summary.mean = sum / static_cast<double>(counts.finite);
  }
  return summary;
}

void AccumulateFloat(std::span<const double> source, std::span<const double> target,
                     int64_t first_flat, const Tolerance& tolerance, Accumulator& acc, Sums& sums) {
  for (size_t idx = 0; idx < source.size(); ++idx) {
    const double s = source[idx];
    const double t = target[idx];
    const int64_t flat = first_flat + static_cast<int64_t>(idx);
    AddValue(s, acc.source);
    AddValue(t, acc.target);
    sums.source += std::isfinite(s) ? s : 0.0;
    sums.target += std::isfinite(t) ? t : 0.0;
    if (!std::isfinite(s) || !std::isfinite(t)) {
      AddNonFinite(s, t, flat, acc.non_finite);
      continue;
    }
    // Written as numpy.isclose writes it (atol + rtol * |b|, built with -ffp-contract=off) so
    // mismatch counts agree with numpy bit for bit. -0 against +0 gives 0 <= allowed: equal.
    const double abs_error = std::abs(t - s);
    const double allowed = tolerance.atol + tolerance.rtol * std::abs(s);
    AddError(s, t, abs_error, flat, acc, sums);
    AddToleranceToPass(s, abs_error, tolerance, acc);
    if (!(abs_error <= allowed)) {
      AddValueMismatch(allowed > 0.0 ? abs_error / allowed : kInf, abs_error, flat, acc);
    }
  }
}

void AccumulateExact(std::span<const uint64_t> source, bool source_signed,
                     std::span<const uint64_t> target, bool target_signed, int64_t first_flat,
                     Accumulator& acc, Sums& sums) {
  for (size_t idx = 0; idx < source.size(); ++idx) {
    const double s = IntToDouble(source[idx], source_signed);
    const double t = IntToDouble(target[idx], target_signed);
    const int64_t flat = first_flat + static_cast<int64_t>(idx);
    AddValue(s, acc.source);
    AddValue(t, acc.target);
    sums.source += s;
    sums.target += t;
    const double abs_error = IntAbsDiff(source[idx], source_signed, target[idx], target_signed);
    AddError(s, t, abs_error, flat, acc, sums);
    if (!IntEqual(source[idx], source_signed, target[idx], target_signed)) {
      AddValueMismatch(abs_error, abs_error, flat, acc);
    }
  }
}

double IntAbsDiff(uint64_t a, bool a_signed, uint64_t b, bool b_signed) {
  const bool a_negative = a_signed && (a >> 63) != 0;
  const bool b_negative = b_signed && (b >> 63) != 0;
  if (a_negative == b_negative) {
    // Same sign: unsigned order of the bit patterns is the order of the values (two's complement
    // keeps negatives in order), and the difference modulo 2^64 is the exact magnitude.
    return static_cast<double>(a > b ? a - b : b - a);
  }
  // Opposite signs: |a - b| = |negative| + positive, which can exceed 2^64; add in double.
  const uint64_t negative = a_negative ? a : b;
  const uint64_t positive = a_negative ? b : a;
  const uint64_t magnitude_minus_one = ~negative;  // -(x + 1) for a negative int64 x
  return static_cast<double>(positive) + static_cast<double>(magnitude_minus_one) + 1.0;
}

}  // namespace convgate::compare::internal
