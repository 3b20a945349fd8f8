// The streaming core of CompareTensors: one pass over pairs of widened elements, accumulating every
// statistic that does not need the whole error distribution. Kept free of formatting and of
// Tensor so it can later be vectorized and split across threads (one Accumulator per thread,
// merged in index order).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "convgate/compare/tensor_compare.h"
#include "convgate/compare/tolerance.h"

namespace convgate::compare::internal {

// Min/max/sum and counts of one side's values.
struct ValueAccumulator {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0.0;
  ValueSummary counts;  // only the count fields are maintained while streaming

  ValueSummary Finish() const;
};

// A failing element that is a candidate for TensorComparison::worst.
struct WorstCandidate {
  int64_t flat = -1;
  double score = -1.0;  // |t - s| / allowed (Inf when allowed is 0); |t - s| when exact
  double abs_error = -1.0;
};

struct Accumulator {
  ValueAccumulator source;
  ValueAccumulator target;
  NonFiniteSplit non_finite;

  // Over elements finite on both sides.
  int64_t compared = 0;
  double sum_abs_error = 0.0;
  double sum_rel_error = 0.0;
  double max_rel_error = 0.0;
  double max_abs_error = -1.0;  // below any real error, so the first compared element sets it
  int64_t max_abs_flat = -1;
  // Every finite |t - s| in index order, for the percentiles.
  std::vector<double> abs_errors;

  // Finite elements outside the tolerance (or unequal, when exact), and the worst of them.
  int64_t value_mismatches = 0;
  WorstCandidate worst_value;

  // See TensorComparison::atol_to_pass / rtol_to_pass.
  double atol_to_pass = 0.0;
  double rtol_to_pass = 0.0;
};

// Adds one value to a side's summary (NaN/Inf counted, finite ones into min/max/sum).
void AddValue(double value, ValueAccumulator& acc);

// Tolerance comparison of source[i] against target[i]; element i has flat index first_flat + i.
// REQUIRES: source.size() == target.size().
void AccumulateFloat(std::span<const double> source, std::span<const double> target,
                     int64_t first_flat, const Tolerance& tolerance, Accumulator& acc);

// Exact comparison of integer/bool elements widened by WidenToBits; *_signed says how each side's
// bits are to be read. REQUIRES: source.size() == target.size().
void AccumulateExact(std::span<const uint64_t> source, bool source_signed,
                     std::span<const uint64_t> target, bool target_signed, int64_t first_flat,
                     Accumulator& acc);

// |a - b| of two widened integers, exact up to 2^53 (the difference is taken in the integer
// domain, then converted).
double IntAbsDiff(uint64_t a, bool a_signed, uint64_t b, bool b_signed);

// Whether two widened integers hold the same value.
inline bool IntEqual(uint64_t a, bool a_signed, uint64_t b, bool b_signed) {
  // Equal bits are the same value unless one side reads them as a negative int64 and the other
  // as a uint64 of 2^63 or more.
  return a == b && (a_signed == b_signed || (a >> 63) == 0);
}

// The widened integer as double (int64/uint64 beyond 2^53 round to nearest).
inline double IntToDouble(uint64_t bits, bool is_signed) {
  return is_signed ? static_cast<double>(static_cast<int64_t>(bits)) : static_cast<double>(bits);
}

}  // namespace convgate::compare::internal
