#include "convgate/compare/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "compare/accumulator.h"
#include "compare/messages.h"
#include "compare/string_compare.h"
#include "compare/widen.h"

namespace convgate::compare {
namespace {

using internal::Accumulator;

// Elements widened per step: two 32 KiB double buffers stay in L1/L2, and the chunk is the unit a
// later threaded version can hand out.
constexpr int64_t kChunkElements = 4096;

Accumulator RunFloat(const Tensor& source, const Tensor& target, const Tolerance& tolerance) {
  Accumulator acc;
  const int64_t count = source.num_elements();
  acc.abs_errors.reserve(static_cast<size_t>(count));
  std::vector<double> source_chunk(kChunkElements);
  std::vector<double> target_chunk(kChunkElements);
  for (int64_t begin = 0; begin < count; begin += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, count - begin));
    std::span<double> source_view(source_chunk.data(), size);
    std::span<double> target_view(target_chunk.data(), size);
    internal::WidenToDouble(source, begin, source_view);
    internal::WidenToDouble(target, begin, target_view);
    internal::AccumulateFloat(source_view, target_view, begin, tolerance, acc);
  }
  return acc;
}

Accumulator RunExact(const Tensor& source, const Tensor& target) {
  Accumulator acc;
  const int64_t count = source.num_elements();
  const bool source_signed = internal::BitsAreSigned(source.dtype());
  const bool target_signed = internal::BitsAreSigned(target.dtype());
  acc.abs_errors.reserve(static_cast<size_t>(count));
  std::vector<uint64_t> source_chunk(kChunkElements);
  std::vector<uint64_t> target_chunk(kChunkElements);
  for (int64_t begin = 0; begin < count; begin += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, count - begin));
    std::span<uint64_t> source_view(source_chunk.data(), size);
    std::span<uint64_t> target_view(target_chunk.data(), size);
    internal::WidenToBits(source, begin, source_view);
    internal::WidenToBits(target, begin, target_view);
    internal::AccumulateExact(source_view, source_signed, target_view, target_signed, begin, acc);
  }
  return acc;
}

// Everything ElementReport says about element `flat`, read back from the tensors. Elements are
// located in the source's shape, the reference.
ElementReport MakeElementReport(const Tensor& source, const Tensor& target, int64_t flat,
                                const TensorComparison& result) {
  ElementReport element;
  if (flat < 0) return element;
  element.flat = flat;
  element.index = source.shape().Unravel(flat);
  element.source = source.GetDouble(flat);
  element.target = target.GetDouble(flat);
  if (result.exact) {
    uint64_t source_bits = 0;
    uint64_t target_bits = 0;
    internal::WidenToBits(source, flat, std::span<uint64_t>(&source_bits, 1));
    internal::WidenToBits(target, flat, std::span<uint64_t>(&target_bits, 1));
    element.abs_error = internal::IntAbsDiff(source_bits, internal::BitsAreSigned(source.dtype()),
                                             target_bits, internal::BitsAreSigned(target.dtype()));
  } else {
    element.abs_error = std::abs(element.target - element.source);
    element.allowed = result.tolerance.atol + result.tolerance.rtol * std::abs(element.source);
  }
  element.rel_error = element.abs_error / std::max(std::abs(element.source), kRelErrorFloor);
  return element;
}

ErrorStats FinishErrors(Accumulator& acc, const Tensor& source, const Tensor& target,
                        const TensorComparison& result) {
  ErrorStats stats;
  stats.compared = acc.compared;
  if (acc.compared == 0) return stats;
  const auto compared = static_cast<double>(acc.compared);
  stats.max_abs_error = acc.max_abs_error;
  stats.mean_abs_error = acc.sum_abs_error / compared;
  stats.max_rel_error = acc.max_rel_error;
  stats.mean_rel_error = acc.sum_rel_error / compared;
  Percentiles(acc.abs_errors, kPercentiles, stats.abs_error_percentiles);
  stats.max_abs = MakeElementReport(source, target, acc.max_abs_flat, result);
  return stats;
}

// See TensorComparison::worst for the precedence.
int64_t WorstFlat(const Accumulator& acc) {
  if (acc.non_finite.first_introduced >= 0) return acc.non_finite.first_introduced;
  if (acc.worst_value.flat >= 0) return acc.worst_value.flat;
  return acc.non_finite.first_inherited;
}

void CompareValues(const Tensor& source, const Tensor& target, TensorComparison& result) {
  Accumulator acc =
      result.exact ? RunExact(source, target) : RunFloat(source, target, result.tolerance);
  result.source_values = acc.source.Finish();
  result.target_values = acc.target.Finish();
  result.non_finite = acc.non_finite;
  result.errors = FinishErrors(acc, source, target, result);
  result.mismatches = acc.value_mismatches + acc.non_finite.introduced_nan +
                      acc.non_finite.introduced_inf + acc.non_finite.inherited;
  if (result.num_elements > 0) {
    result.mismatch_fraction =
        static_cast<double>(result.mismatches) / static_cast<double>(result.num_elements);
  }
  result.worst = MakeElementReport(source, target, WorstFlat(acc), result);
  result.atol_to_pass = acc.atol_to_pass;
  result.rtol_to_pass = acc.rtol_to_pass;
  const ElementReport worst_value = MakeElementReport(source, target, acc.worst_value.flat, result);
  internal::AddValueMessages(source, target, worst_value, result);
}

}  // namespace

ValueSummary SummarizeValues(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString) return ValueSummary();
  internal::ValueAccumulator acc;
  const int64_t count = tensor.num_elements();
  std::vector<double> chunk(kChunkElements);
  for (int64_t begin = 0; begin < count; begin += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, count - begin));
    std::span<double> view(chunk.data(), size);
    internal::WidenToDouble(tensor, begin, view);
    for (double value : view) internal::AddValue(value, acc);
  }
  return acc.Finish();
}

TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance) {
  TensorComparison result;
  result.source_desc = source.Describe();
  result.target_desc = target.Describe();
  result.dtype_match = source.dtype() == target.dtype();
  result.shape_match = source.shape() == target.shape();
  const bool source_strings = source.dtype() == DType::kString;
  const bool target_strings = target.dtype() == DType::kString;
  // A string has no numeric value to pair with a number, so mixed pairs stop at the dtype mismatch.
  result.values_compared =
      source.num_elements() == target.num_elements() && source_strings == target_strings;
  result.exact = source_strings == target_strings && !IsFloating(source.dtype()) &&
                 !IsFloating(target.dtype());
  result.tolerance = tolerance;
  result.num_elements = source.num_elements();
  if (!result.dtype_match)
    result.failures.push_back(internal::DTypeMismatchMessage(source, target));
  if (!result.shape_match)
    result.failures.push_back(internal::ShapeMismatchMessage(source, target));
  if (result.values_compared && source_strings) {
    internal::CompareStrings(source, target, result);
  } else if (result.values_compared) {
    CompareValues(source, target, result);
  }
  result.passed = result.failures.empty();
  return result;
}

}  // namespace convgate::compare
