#include "gate/input_coverage.h"

#include <algorithm>
#include <cmath>

#include "convgate/core/numbers.h"

namespace convgate::gate::internal {

void CoverageTracker::Scan(const Tensor& tensor, Output& output) {
  const bool floating = IsFloating(tensor.dtype());
  output.saturated = output.saturated && floating;
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) {
    if (!output.constant && !output.saturated) return;
    const double value = tensor.GetDouble(idx);
    if (!std::isfinite(value)) {
      output.constant = output.saturated = false;
      return;
    }
    if (!output.any) {
      output.any = true;
      output.value = value;
    }
    if (value != output.value) output.constant = false;
    if (value == 0.0) {
      output.seen_zero = true;
    } else if (value == 1.0) {
      output.seen_one = true;
    } else {
      output.saturated = false;
    }
  }
}

void CoverageTracker::Add(const TensorMap& outputs) {
  for (const auto& entry : outputs) {
    if (entry.tensor.dtype() == DType::kString) continue;
    Output* output = nullptr;
    for (Output& known : outputs_) {
      if (known.name == entry.name) output = &known;
    }
    if (output == nullptr) output = &outputs_.emplace_back(Output{.name = entry.name});
    output->largest = std::max(output->largest, entry.tensor.num_elements());
    ++output->samples;
    Scan(entry.tensor, *output);
  }
}

std::vector<std::string> CoverageTracker::Findings() const {
  std::vector<std::string> findings;
  for (const Output& output : outputs_) {
    // One element is a scalar (a loss, a count): constant by nature, not a sign of anything.
    if (!output.any || output.largest < 2) continue;
    const std::string every =
        output.samples > 1 ? "every element of every sample" : "every element (1 sample)";
    if (output.constant) {
      findings.push_back("output '" + output.name + "' is " + FormatSignificant(output.value, 6) +
                         " on " + every);
    } else if (output.saturated && output.seen_zero && output.seen_one) {
      findings.push_back("output '" + output.name + "' is saturated: 0 or 1 on " + every +
                         " (a sigmoid or softmax at its bounds)");
    }
  }
  return findings;
}

}  // namespace convgate::gate::internal
