// Exact error percentiles for a percentile policy, computed from the tensors. CompareTensors keeps
// only the absolute-error percentiles of kPercentiles; a policy may name any q, and Polygraphy's
// rule needs the relative error's too.
#include <algorithm>
#include <cmath>
#include <vector>

#include "compare/widen.h"
#include "convgate/compare/judge.h"

namespace convgate::compare {
namespace {

// Elements widened per step, as in CompareTensors.
constexpr int64_t kChunkElements = 4096;

}  // namespace

std::optional<ErrorStatValues> ComputeErrorPercentiles(const Tensor& source, const Tensor& target,
                                                       double q) {
  const int64_t count = source.num_elements();
  std::vector<double> abs_errors;
  std::vector<double> rel_errors;
  abs_errors.reserve(static_cast<size_t>(count));
  rel_errors.reserve(static_cast<size_t>(count));
  std::vector<double> source_chunk(kChunkElements);
  std::vector<double> target_chunk(kChunkElements);
  for (int64_t begin = 0; begin < count; begin += kChunkElements) {
    const auto size = static_cast<size_t>(std::min(kChunkElements, count - begin));
    internal::WidenToDouble(source, begin, std::span<double>(source_chunk.data(), size));
    internal::WidenToDouble(target, begin, std::span<double>(target_chunk.data(), size));
    for (size_t idx = 0; idx < size; ++idx) {
      const double s = source_chunk[idx];
      const double t = target_chunk[idx];
      if (!std::isfinite(s) || !std::isfinite(t)) continue;
      const double abs_error = std::abs(t - s);
      abs_errors.push_back(abs_error);
      rel_errors.push_back(abs_error / std::max(std::abs(s), kRelErrorFloor));
    }
  }
  if (abs_errors.empty()) return std::nullopt;
  return ErrorStatValues{Percentile(abs_errors, q), Percentile(rel_errors, q)};
}

}  // namespace convgate::compare
