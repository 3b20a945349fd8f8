// Deterministic tensor pairs for the numpy cross-check (numpy_cross_check_test.cc).
#pragma once

#include <string>
#include <vector>

#include "convgate/compare/tolerance.h"
#include "convgate/core/tensor.h"

namespace convgate::compare {

struct NumpyCase {
  std::string name;
  DType source_dtype = DType::kFloat32;
  DType target_dtype = DType::kFloat32;
  Shape shape;
  Tolerance tolerance;
  // Values before rounding to the dtypes (Tensor::SetDouble rounds to nearest even).
  std::vector<double> source;
  std::vector<double> target;

  Tensor MakeSource() const;
  Tensor MakeTarget() const;
};

// Float32/64/16 and bfloat16 pairs: plain noise, wide magnitudes with zeros, quantized values with
// many ties, injected NaN/Inf of every kind, zero tolerance, fp16 targets of fp32 sources, and tiny
// and all-NaN tensors for the percentile and empty-statistics edges.
std::vector<NumpyCase> MakeNumpyCases();

}  // namespace convgate::compare
