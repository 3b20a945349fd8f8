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

std::vector<std::string> CoverageTracker::Findings(const std::vector<OutputCheck>& checks) const {
  std::vector<std::string> findings;
  std::vector<std::string> reported;
  for (const Output& output : outputs_) {
    // One element is a scalar (a loss, a count): constant by nature, not a sign of anything.
    if (!output.any || output.largest < 2) continue;
    const std::string every =
        output.samples > 1 ? "every element of every sample" : "every element (1 sample)";
    if (output.constant || (output.saturated && output.seen_zero && output.seen_one)) {
      reported.push_back(output.name);
    }
    if (output.constant) {
      findings.push_back("output '" + output.name + "' is " + FormatSignificant(output.value, 6) +
                         " on " + every);
    } else if (output.saturated && output.seen_zero && output.seen_one) {
      findings.push_back("output '" + output.name + "' is saturated: 0 or 1 on " + every +
                         " (a sigmoid or softmax at its bounds)");
    }
  }
  // Within atol of 0 on every sample: compare's judgement found no energy to measure against.
  struct NearZero {
    std::string name;
    bool everywhere = true;
    double max_abs = 0.0;
    double atol = 0.0;
  };
  std::vector<NearZero> near;
  for (const OutputCheck& check : checks) {
    if (!check.comparison || !check.comparison->values_compared) continue;
    auto it = std::find_if(near.begin(), near.end(),
                           [&](const NearZero& n) { return n.name == check.output; });
    if (it == near.end()) it = near.insert(near.end(), NearZero{.name = check.output});
    const compare::ValueSummary& values = check.comparison->source_values;
    it->everywhere = it->everywhere && !check.floors_undefined.empty();
    it->max_abs = std::max({it->max_abs, std::abs(values.min), std::abs(values.max)});
    it->atol = std::max(it->atol, check.tolerance.atol);
  }
  for (const NearZero& n : near) {
    if (!n.everywhere || n.max_abs == 0.0) continue;
    if (std::find(reported.begin(), reported.end(), n.name) != reported.end()) continue;
    findings.push_back("output '" + n.name + "' stays within atol " + FormatSignificant(n.atol, 3) +
                       " of 0 on every sample (max |source| " + FormatSignificant(n.max_abs, 3) +
                       ")");
  }
  return findings;
}

}  // namespace convgate::gate::internal
