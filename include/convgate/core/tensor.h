// A dense, row-major tensor that owns its bytes. Move-only: copies are explicit (Clone()), because
// model outputs can be gigabytes and an accidental copy is a memory bug, not a convenience.
//
// String tensors (DType::kString) hold one std::string per element, in row-major order, beside an
// empty byte buffer: byte_size() is 0, bytes() is empty, data<T>() must not be used, and
// strings() holds the elements. A string is any sequence of bytes, as ONNX allows (UTF-8 by
// convention; the numpy writer is the one place that requires it). Numeric tensors have an empty
// strings().
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/dtype.h"
#include "convgate/core/shape.h"
#include "convgate/core/status.h"

namespace convgate {

class Tensor {
 public:
  Tensor() = default;  // an empty float32 scalar-less tensor; use Allocate for real ones
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  // Zero-filled tensor (empty strings for kString). Fails (Unavailable) only if the memory cannot
  // be allocated.
  static Result<Tensor> Allocate(DType dtype, Shape shape);
  // Copies bytes; fails unless bytes.size() == NumElements * DTypeSize. InvalidArgument for
  // kString, which has no byte representation (use FromStrings).
  static Result<Tensor> FromBytes(DType dtype, Shape shape, std::span<const std::byte> bytes);
  // A kString tensor holding `values` in row-major order; InvalidArgument unless values.size() ==
  // shape.NumElements().
  static Result<Tensor> FromStrings(Shape shape, std::vector<std::string> values);
  // Convenience for tests and generated data. REQUIRES: values.size() == shape.NumElements(),
  // dtype != kString (see FromStrings).
  template <typename T>
  static Tensor FromVector(DType dtype, Shape shape, const std::vector<T>& values);
  // A tensor over `bytes` that it does not copy: an ONNX Runtime output's buffer, a memory-mapped
  // file. `owner` keeps the memory alive (and releases it with the last Tensor referring to it);
  // the bytes must stay valid and unshared with writers while it lives. Same size rule as
  // FromBytes; InvalidArgument for kString.
  static Result<Tensor> Adopt(DType dtype, Shape shape, std::span<std::byte> bytes,
                              std::shared_ptr<void> owner);

  Tensor Clone() const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return shape_.NumElements(); }
  size_t byte_size() const { return byte_size_; }

  std::span<std::byte> bytes() { return {data_, byte_size_}; }
  std::span<const std::byte> bytes() const { return {data_, byte_size_}; }

  // The elements of a kString tensor; empty for every other dtype.
  std::span<std::string> strings() { return strings_; }
  std::span<const std::string> strings() const { return strings_; }

  // Whether the elements' address suits their type. Always, except for adopted memory: a member of
  // an .npz read in place (io/npz.h) starts wherever its zip header ends. Readers of adopted
  // tensors check it before data<T>() and read through bytes() (memcpy) when it is false.
  bool IsAligned() const {
    const size_t size = DTypeSize(dtype_);
    return size == 0 || reinterpret_cast<uintptr_t>(data_) % size == 0;
  }

  // Typed views. REQUIRES: sizeof(T) == DTypeSize(dtype()) (fp16/bf16 are viewed as uint16_t), so
  // never for kString; IsAligned() (a misaligned T* is undefined behaviour, and vectorized loops
  // that assume alignment fault on it).
  template <typename T>
  std::span<T> data() {
    assert(IsAligned());
    return {reinterpret_cast<T*>(data_), static_cast<size_t>(num_elements())};
  }
  template <typename T>
  std::span<const T> data() const {
    assert(IsAligned());
    return {reinterpret_cast<const T*>(data_), static_cast<size_t>(num_elements())};
  }

  // Element `flat` as double (fp16/bf16 widened exactly; int64 beyond 2^53 rounds).
  // REQUIRES: dtype() != kString; a string tensor reads as NaN, never as a plausible number.
  double GetDouble(int64_t flat) const;
  // Stores `value` converted to dtype() (float rounding to nearest even; integers truncate toward
  // zero and saturate; bool is value != 0). REQUIRES: dtype() != kString (ignored for strings).
  void SetDouble(int64_t flat, double value);

  // Same dtype, same shape, same bytes (for strings: the same bytes in every element).
  bool BitwiseEquals(const Tensor& other) const;
  // "float32[1, 3, 224, 224]", "string[2]".
  std::string Describe() const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  size_t byte_size_ = 0;
  // The elements: in storage_ when the tensor allocated them, else in memory storage_ keeps
  // alive for it (Adopt). A moved-from tensor's data_ is left dangling: it is never read.
  std::byte* data_ = nullptr;
  std::shared_ptr<void> storage_;
  std::vector<std::string> strings_;  // kString only
};

// An ordered collection of named tensors: one sample's inputs or a model's outputs. Order is the
// model's declaration order where there is one; lookups are by exact name.
class TensorMap {
 public:
  struct Entry {
    std::string name;
    Tensor tensor;
  };

  // Fails if the name is already present.
  Status Insert(std::string name, Tensor tensor);
  // Appends without looking for the name: Insert searches the map, so a reader of 100k tensors
  // was quadratic. REQUIRES: the name is not present (the names are one JSON object's keys, or
  // were checked unique).
  void Append(std::string name, Tensor tensor);
  // Replaces an existing entry or appends.
  void InsertOrAssign(std::string name, Tensor tensor);
  const Tensor* Find(std::string_view name) const;
  Tensor* Find(std::string_view name);
  bool Contains(std::string_view name) const { return Find(name) != nullptr; }
  std::vector<std::string> Names() const;
  TensorMap Clone() const;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Entry& operator[](size_t idx) const { return entries_[idx]; }
  Entry& operator[](size_t idx) { return entries_[idx]; }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  std::vector<Entry>::iterator begin() { return entries_.begin(); }
  std::vector<Entry>::iterator end() { return entries_.end(); }

 private:
  std::vector<Entry> entries_;
};

template <typename T>
Tensor Tensor::FromVector(DType dtype, Shape shape, const std::vector<T>& values) {
  Result<Tensor> tensor =
      FromBytes(dtype, std::move(shape),
                std::span<const std::byte>(reinterpret_cast<const std::byte*>(values.data()),
                                           values.size() * sizeof(T)));
  if (!tensor.ok()) std::abort();  // programmer error: sizes must match
  return std::move(tensor).value();
}

}  // namespace convgate
