#include "compare/accumulator.h"

#include <algorithm>
#include <cmath>

namespace convgate::compare::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

}  // namespace

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
void AddError(double source, double abs_error, int64_t flat, Accumulator& acc) {
  const double rel_error = abs_error / std::max(std::abs(source), kRelErrorFloor);
  ++acc.compared;
  acc.sum_abs_error += abs_error;
  acc.sum_rel_error += rel_error;
  acc.max_rel_error = std::max(acc.max_rel_error, rel_error);
  // Strictly greater: ties keep the lower index, as numpy.argmax does.
  if (abs_error > acc.max_abs_error) {
    acc.max_abs_error = abs_error;
    acc.max_abs_flat = flat;
  }
  acc.abs_errors.push_back(abs_error);
}

void AddValueMismatch(double score, double abs_error, int64_t flat, Accumulator& acc) {
  ++acc.value_mismatches;
  WorstCandidate& worst = acc.worst_value;
  if (score > worst.score || (score == worst.score && abs_error > worst.abs_error)) {
    worst = WorstCandidate{flat, score, abs_error};
  }
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

ValueSummary ValueAccumulator::Finish() const {
  ValueSummary summary = counts;
  if (counts.finite > 0) {
    summary.min = min;
    summary.max = max;
    summary.mean = sum / static_cast<double>(counts.finite);
  }
  return summary;
}

void AccumulateFloat(std::span<const double> source, std::span<const double> target,
                     int64_t first_flat, const Tolerance& tolerance, Accumulator& acc) {
  for (size_t idx = 0; idx < source.size(); ++idx) {
    const double s = source[idx];
    const double t = target[idx];
    const int64_t flat = first_flat + static_cast<int64_t>(idx);
    AddValue(s, acc.source);
    AddValue(t, acc.target);
    if (!std::isfinite(s) || !std::isfinite(t)) {
      AddNonFinite(s, t, flat, acc.non_finite);
      continue;
    }
    // Written as numpy.isclose writes it (atol + rtol * |b|, built with -ffp-contract=off) so
    // mismatch counts agree with numpy bit for bit. -0 against +0 gives 0 <= allowed: equal.
    const double abs_error = std::abs(t - s);
    const double allowed = tolerance.atol + tolerance.rtol * std::abs(s);
    AddError(s, abs_error, flat, acc);
    AddToleranceToPass(s, abs_error, tolerance, acc);
    if (!(abs_error <= allowed)) {
      AddValueMismatch(allowed > 0.0 ? abs_error / allowed : kInf, abs_error, flat, acc);
    }
  }
}

void AccumulateExact(std::span<const uint64_t> source, bool source_signed,
                     std::span<const uint64_t> target, bool target_signed, int64_t first_flat,
                     Accumulator& acc) {
  for (size_t idx = 0; idx < source.size(); ++idx) {
    const double s = IntToDouble(source[idx], source_signed);
    const int64_t flat = first_flat + static_cast<int64_t>(idx);
    AddValue(s, acc.source);
    AddValue(IntToDouble(target[idx], target_signed), acc.target);
    const double abs_error = IntAbsDiff(source[idx], source_signed, target[idx], target_signed);
    AddError(s, abs_error, flat, acc);
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
