#include "convgate/compare/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "compare/accumulator.h"
#include "compare/frontier_pass.h"
#include "compare/messages.h"
#include "compare/parallel.h"
#include "compare/percentile.h"
#include "compare/select.h"
#include "compare/simd_kernel.h"
#include "compare/string_compare.h"
#include "compare/widen.h"

namespace convgate::compare {
namespace {

using internal::Accumulator;
using internal::kBlockElements;
using internal::kChunkElements;
using internal::Sums;

// Per-worker buffers: the two widened chunks and the histogram indices of the SIMD kernel.
struct ChunkBuffers {
  internal::LazyChunk<double> source;
  internal::LazyChunk<double> target;
  internal::LazyChunk<uint64_t> source_bits;
  internal::LazyChunk<uint64_t> target_bits;
  std::vector<float> source_f32;  // float32 runs that are not aligned (Float32Run)
  std::vector<float> target_f32;
  internal::ChunkScratch scratch;
};

// A chunk of elements [begin, begin + size) through the SIMD kernel, reading float32 and float64
// pairs in place and anything else widened; false when it holds a NaN or Inf (nothing added).
bool AccumulateChunkSimd(const Tensor& source, const Tensor& target, const Tolerance& tolerance,
                         internal::PairLayout layout, int64_t begin, size_t size,
                         ChunkBuffers& buffers, Accumulator& acc, Sums& sums) {
  const auto offset = static_cast<size_t>(begin);
  switch (layout) {
    case internal::PairLayout::kFloat32:
      return internal::AccumulateFiniteChunk(
          internal::Float32Run(source, begin, size, buffers.source_f32),
          internal::Float32Run(target, begin, size, buffers.target_f32), begin, tolerance,
          buffers.scratch, acc, sums);
    case internal::PairLayout::kFloat64:
      return internal::AccumulateFiniteChunk(source.data<double>().subspan(offset, size),
                                             target.data<double>().subspan(offset, size), begin,
                                             tolerance, buffers.scratch, acc, sums);
    case internal::PairLayout::kWidened:
      break;
  }
  const std::span<double> source_view = buffers.source.First(size);
  const std::span<double> target_view = buffers.target.First(size);
  internal::WidenToDouble(source, begin, source_view);
  internal::WidenToDouble(target, begin, target_view);
  return internal::AccumulateFiniteChunk(std::span<const double>(source_view),
                                         std::span<const double>(target_view), begin, tolerance,
                                         buffers.scratch, acc, sums);
}

// Elements [begin, end) of a floating comparison: each chunk goes through the SIMD kernel, or
// through the scalar path when it holds a NaN or Inf.
void AccumulateFloatBlock(const Tensor& source, const Tensor& target, const Tolerance& tolerance,
                          int64_t begin, int64_t end, ChunkBuffers& buffers, Accumulator& acc,
                          Sums& sums) {
  const internal::PairLayout layout = internal::LayoutOf(source, target);
  for (int64_t chunk = begin; chunk < end; chunk += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, end - chunk));
    if (AccumulateChunkSimd(source, target, tolerance, layout, chunk, size, buffers, acc, sums)) {
      continue;
    }
    const std::span<double> source_view = buffers.source.First(size);
    const std::span<double> target_view = buffers.target.First(size);
    internal::WidenToDouble(source, chunk, source_view);
    internal::WidenToDouble(target, chunk, target_view);
    internal::AccumulateFloat(source_view, target_view, chunk, tolerance, acc, sums);
  }
}

void AccumulateExactBlock(const Tensor& source, const Tensor& target, int64_t begin, int64_t end,
                          ChunkBuffers& buffers, Accumulator& acc, Sums& sums) {
  const bool source_signed = internal::BitsAreSigned(source.dtype());
  const bool target_signed = internal::BitsAreSigned(target.dtype());
  for (int64_t chunk = begin; chunk < end; chunk += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, end - chunk));
    const std::span<uint64_t> source_view = buffers.source_bits.First(size);
    const std::span<uint64_t> target_view = buffers.target_bits.First(size);
    internal::WidenToBits(source, chunk, source_view);
    internal::WidenToBits(target, chunk, target_view);
    internal::AccumulateExact(source_view, source_signed, target_view, target_signed, chunk, acc,
                              sums);
  }
}

// Pass 1: every streaming statistic and the histograms, on `workers` threads. Sums are kept per
// block and added in block order (accumulator.h), so the result does not depend on `workers`.
std::pair<Accumulator, Sums> RunPassOne(const Tensor& source, const Tensor& target,
                                        const TensorComparison& result, int workers) {
  const int64_t count = source.num_elements();
  const int64_t blocks = (count + kBlockElements - 1) / kBlockElements;
  std::vector<Sums> block_sums(static_cast<size_t>(blocks));
  std::vector<Accumulator> accumulators(static_cast<size_t>(workers));
  std::vector<std::unique_ptr<ChunkBuffers>> buffers(static_cast<size_t>(workers));
  internal::ForEachBlock(blocks, workers, [&](int worker, int64_t block) {
    const auto slot = static_cast<size_t>(worker);
    if (!buffers[slot]) buffers[slot] = std::make_unique<ChunkBuffers>();
    const int64_t begin = block * kBlockElements;
    const int64_t end = std::min(count, begin + kBlockElements);
    Sums& sums = block_sums[static_cast<size_t>(block)];
    if (result.exact) {
      AccumulateExactBlock(source, target, begin, end, *buffers[slot], accumulators[slot], sums);
    } else {
      AccumulateFloatBlock(source, target, result.tolerance, begin, end, *buffers[slot],
                           accumulators[slot], sums);
    }
  });
  for (size_t worker = 1; worker < accumulators.size(); ++worker) {
    accumulators[0].Merge(accumulators[worker]);
  }
  return {std::move(accumulators[0]), internal::MergeSums(block_sums)};
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

// The exact abs-error percentiles (numpy 'linear'), selected from the tensors (select.h).
void FillPercentiles(const Tensor& source, const Tensor& target, const Accumulator& acc,
                     const TensorComparison& result, int workers, const CompareOptions& options,
                     ErrorStats& stats) {
  std::vector<internal::PercentileRank> positions;
  std::vector<int64_t> ranks;
  for (double q : kPercentiles) {
    positions.push_back(internal::RankOf(acc.compared, q));
    ranks.push_back(positions.back().lower);
    ranks.push_back(positions.back().upper);
  }
  const bool all_finite = acc.source.counts.finite == result.num_elements &&
                          acc.target.counts.finite == result.num_elements;
  const internal::SelectionInput input{
      &source,         &target,    result.exact, &acc.histograms.abs_error,
      acc.zero_errors, all_finite, workers,      options.selection_scratch_values};
  const std::vector<double> values = internal::SelectErrorRanks(input, ranks);
  for (size_t idx = 0; idx < positions.size(); ++idx) {
    stats.abs_error_percentiles[idx] =
        internal::NumpyLerp(values[2 * idx], values[2 * idx + 1], positions[idx].gamma);
  }
}

ErrorStats FinishErrors(const Accumulator& acc, const Sums& sums, const Tensor& source,
                        const Tensor& target, const TensorComparison& result, int workers,
                        const CompareOptions& options) {
  ErrorStats stats;
  stats.compared = acc.compared;
  if (acc.compared == 0) return stats;
  const auto compared = static_cast<double>(acc.compared);
  stats.max_abs_error = acc.max_abs_error;
  stats.mean_abs_error = sums.abs_error / compared;
  stats.max_rel_error = acc.max_rel_error;
  stats.mean_rel_error = sums.rel_error / compared;
  FillPercentiles(source, target, acc, result, workers, options, stats);
  stats.max_abs = MakeElementReport(source, target, acc.max_abs_flat, result);
  return stats;
}

// Metrics per their definitions in tensor_compare.h.
Metrics FinishMetrics(const Sums& sums, int64_t compared, double peak) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Metrics metrics;
  if (compared == 0) return metrics;
  const double squared_error = sums.squared_error;
  const double squared_source = sums.squared_source;
  const double squared_target = sums.squared_target;
  const double mean_squared_error = squared_error / static_cast<double>(compared);
  metrics.peak = peak;
  metrics.rmse = std::sqrt(mean_squared_error);
  if (squared_source > 0.0) {
    metrics.nmse = squared_error / squared_source;
  } else {
    metrics.nmse = squared_error > 0.0 ? kInf : 0.0;
  }
  if (squared_source == 0.0 || squared_target == 0.0) {
    metrics.cosine = squared_source == squared_target ? 1.0 : 0.0;
  } else {
    // Two square roots rather than one of the product, which overflows for large values; clamped
    // because rounding can put identical sides a hair above 1.
    const double norms = std::sqrt(squared_source) * std::sqrt(squared_target);
    metrics.cosine = std::clamp(sums.dot / norms, -1.0, 1.0);
  }
  metrics.snr_db = squared_error == 0.0 ? kInf : 10.0 * std::log10(squared_source / squared_error);
  metrics.psnr_db =
      squared_error == 0.0 ? kInf : 10.0 * std::log10(peak * peak / mean_squared_error);
  return metrics;
}

// See TensorComparison::worst for the precedence.
int64_t WorstFlat(const Accumulator& acc) {
  if (acc.non_finite.first_introduced >= 0) return acc.non_finite.first_introduced;
  if (acc.worst_value.flat >= 0) return acc.worst_value.flat;
  return acc.non_finite.first_inherited;
}

void CompareValues(const Tensor& source, const Tensor& target, const CompareOptions& options,
                   TensorComparison& result) {
  const int workers = internal::WorkerCount(result.num_elements, options);
  auto [acc, sums] = RunPassOne(source, target, result, workers);
  result.source_values = acc.source.Finish(sums.source);
  result.target_values = acc.target.Finish(sums.target);
  result.non_finite = acc.non_finite;
  result.errors = FinishErrors(acc, sums, source, target, result, workers, options);
  result.metrics = FinishMetrics(sums, acc.compared, acc.peak);
  result.mismatches = acc.value_mismatches + acc.non_finite.introduced_nan +
                      acc.non_finite.introduced_inf + acc.non_finite.inherited;
  if (result.num_elements > 0) {
    result.mismatch_fraction =
        static_cast<double>(result.mismatches) / static_cast<double>(result.num_elements);
  }
  result.worst = MakeElementReport(source, target, WorstFlat(acc), result);
  result.atol_to_pass = acc.atol_to_pass;
  result.rtol_to_pass = acc.rtol_to_pass;
  if (options.error_summary) {
    result.summary = SummarizeErrors(
        acc.histograms,
        result.exact ? Frontier()
                     : internal::CollectFrontier(source, target, acc.histograms.joint, acc.compared,
                                                 acc.compared - acc.zero_errors, workers));
  }
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
  return acc.Finish(acc.sum);
}

TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance) {
  return CompareTensors(source, target, tolerance, CompareOptions());
}

TensorComparison CompareTensors(const Tensor& source, const Tensor& target,
                                const Tolerance& tolerance, const CompareOptions& options) {
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
    CompareValues(source, target, options, result);
  }
  result.passed = result.failures.empty();
  return result;
}

}  // namespace convgate::compare
