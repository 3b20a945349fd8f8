// Whether the inputs reached the model. Uniform noise can leave a model's interesting paths
// unreached: a text detector's output map is 0 everywhere on noise, so a conversion with a broken
// weight and one with swapped channels both pass. An output of the source that is constant on
// every sample, or saturated at a sigmoid/softmax bound (every element 0 or 1), is the sign.
#pragma once

#include <string>
#include <vector>

#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"

namespace convgate::gate::internal {

class CoverageTracker {
 public:
  // Folds one sample's source outputs in. An output stops being scanned once it has varied.
  void Add(const TensorMap& outputs);
  // "output 'maps' is 0 on every element of every sample", one per output the inputs did not
  // exercise, in first-seen order; then the outputs `checks` show within atol of 0 on every
  // sample (a detector's map of 4e-6 on noise: cosine and SNR undefined everywhere), which are
  // not constant but say the same.
  std::vector<std::string> Findings(const std::vector<OutputCheck>& checks = {}) const;

 private:
  struct Output {
    std::string name;
    bool constant = true;
    bool saturated = true;  // floating-point, every element 0 or 1, both seen
    bool seen_zero = false;
    bool seen_one = false;
    bool any = false;
    double value = 0.0;
    int64_t largest = 0;  // elements in its largest sample
    int samples = 0;
  };
  void Scan(const Tensor& tensor, Output& output);

  std::vector<Output> outputs_;
};

}  // namespace convgate::gate::internal
