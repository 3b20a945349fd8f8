// A concrete tensor shape. Dimensions are non-negative and the element count is overflow-checked
// at construction, so NumElements() and byte sizes computed from a Shape never wrap.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate {

class Shape {
 public:
  Shape() = default;  // a scalar: rank 0, one element

  // Rejects negative dimensions and element counts above 2^62.
  static Result<Shape> Make(std::vector<int64_t> dims);
  // REQUIRES: dims are valid (for literals in code and tests).
  static Shape Of(std::initializer_list<int64_t> dims);

  size_t rank() const { return dims_.size(); }
  int64_t dim(size_t axis) const { return dims_[axis]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t NumElements() const { return num_elements_; }

  // "[1, 3, 224, 224]"; "[]" for a scalar.
  std::string ToString() const;
  // Row-major multi-index of a flat element offset. REQUIRES: 0 <= flat < NumElements().
  std::vector<int64_t> Unravel(int64_t flat) const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }

 private:
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;
};

// "1x3x224x224", "1,3,224,224" or Polygraphy's "[1,3,224,224]" -> Shape. An empty string, "[]" or
// "scalar" is rank 0.
Result<Shape> ParseShape(std::string_view text);
// "[0, 2, 5]".
std::string FormatIndex(std::span<const int64_t> index);

}  // namespace convgate
