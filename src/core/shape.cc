#include "convgate/core/shape.h"

#include <charconv>
#include <cstdlib>

namespace convgate {
namespace {

// Largest element count a Shape accepts: leaves headroom so that count * 8 bytes fits int64.
constexpr int64_t kMaxElements = int64_t{1} << 60;

}  // namespace

Result<Shape> Shape::Make(std::vector<int64_t> dims) {
  int64_t count = 1;
  bool has_zero = false;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] < 0) {
      return Status::InvalidArgument("dimension " + std::to_string(axis) + " is negative (" +
                                     std::to_string(dims[axis]) + ")");
    }
    if (dims[axis] == 0) has_zero = true;
  }
  // The product of the non-zero dims is checked too: a [0, 2^40, 2^40] tensor holds nothing, but
  // code that iterates over the other axes could still overflow on it.
  for (int64_t dim : dims) {
    if (dim == 0) continue;
    if (count > kMaxElements / dim) {
      return Status::InvalidArgument("shape " + FormatIndex(dims) + " has more than 2^60 elements");
    }
    count *= dim;
  }
  Shape shape;
  shape.dims_ = std::move(dims);
  shape.num_elements_ = has_zero ? 0 : count;
  return shape;
}

Shape Shape::Of(std::initializer_list<int64_t> dims) {
  Result<Shape> shape = Make(std::vector<int64_t>(dims));
  if (!shape.ok()) std::abort();  // programmer error: literal shapes are valid
  return std::move(shape).value();
}

std::string Shape::ToString() const { return FormatIndex(dims_); }

std::vector<int64_t> Shape::Unravel(int64_t flat) const {
  std::vector<int64_t> index(dims_.size(), 0);
  for (size_t axis = dims_.size(); axis-- > 0;) {
    index[axis] = flat % dims_[axis];
    flat /= dims_[axis];
  }
  return index;
}

Result<Shape> ParseShape(std::string_view text) {
  const std::string_view original = text;
  // Polygraphy writes shapes as lists: [1,3,224,224] ([] is a scalar).
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text == "scalar") return Shape();
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find_first_of("x,", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      return Status::InvalidArgument("bad shape '" + std::string(original) +
                                     "': expected dimensions like 1x3x224x224 or [1,3,224,224]");
    }
    dims.push_back(value);
    pos = end + 1;
  }
  Result<Shape> shape = Shape::Make(std::move(dims));
  if (!shape.ok()) return shape.status().WithContext("bad shape '" + std::string(original) + "'");
  return shape;
}

std::string FormatIndex(std::span<const int64_t> index) {
  std::string text = "[";
  for (size_t axis = 0; axis < index.size(); ++axis) {
    if (axis > 0) text += ", ";
    text += std::to_string(index[axis]);
  }
  return text + "]";
}

}  // namespace convgate
