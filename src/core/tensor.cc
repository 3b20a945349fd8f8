#include "convgate/core/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "convgate/core/float16.h"
#include "convgate/core/tensor_copy.h"

namespace convgate {
namespace {

template <typename T>
T Load(const std::byte* base, int64_t flat) {
  T value;
  std::memcpy(&value, base + flat * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

template <typename T>
void Store(std::byte* base, int64_t flat, T value) {
  std::memcpy(base + flat * static_cast<int64_t>(sizeof(T)), &value, sizeof(T));
}

// Saturating, truncating double -> integer conversion; NaN becomes 0.
template <typename T>
T ToInteger(double value) {
  if (std::isnan(value)) return 0;
  if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) {
    return std::numeric_limits<T>::lowest();
  }
  if (value >= static_cast<double>(std::numeric_limits<T>::max())) {
    return std::numeric_limits<T>::max();
  }
  return static_cast<T>(value);
}

Status AllocationFailure(size_t element_count, size_t byte_size, DType dtype, const Shape& shape) {
  const std::string what = dtype == DType::kString ? std::to_string(element_count) + " strings"
                                                   : std::to_string(byte_size) + " bytes";
  return Status::Unavailable("cannot allocate " + what + " for a " + std::string(DTypeName(dtype)) +
                             shape.ToString() + " tensor");
}

// FromBytes and Adopt: `size` bytes hold a dtype[shape] tensor; strings have no bytes.
Status CheckByteSize(DType dtype, const Shape& shape, size_t size) {
  if (dtype == DType::kString) {
    return Status::InvalidArgument("string" + shape.ToString() +
                                   " has no byte representation; build it from its strings");
  }
  const size_t expected = static_cast<size_t>(shape.NumElements()) * DTypeSize(dtype);
  if (size == expected) return Status::OK();
  return Status::InvalidArgument(std::string(DTypeName(dtype)) + shape.ToString() + " needs " +
                                 std::to_string(expected) + " bytes, got " + std::to_string(size));
}

}  // namespace

Result<Tensor> Tensor::Allocate(DType dtype, Shape shape) {
  if (dtype == DType::kString) {
    const auto count = static_cast<size_t>(shape.NumElements());
    Tensor tensor;
    tensor.dtype_ = dtype;
    tensor.shape_ = std::move(shape);
    // Readers call this with counts taken from files; a count the vector cannot hold is reported
    // like any other allocation failure rather than thrown across the module boundary.
    try {
      tensor.strings_.resize(count);
    } catch (const std::bad_alloc&) {
      return AllocationFailure(count, 0, dtype, tensor.shape_);
    } catch (const std::length_error&) {
      return AllocationFailure(count, 0, dtype, tensor.shape_);
    }
    return tensor;
  }
  const size_t element_size = DTypeSize(dtype);
  // Shape guarantees NumElements() <= 2^60, so the product below cannot overflow size_t.
  const size_t byte_size = static_cast<size_t>(shape.NumElements()) * element_size;
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.byte_size_ = byte_size;
  std::byte* data = new (std::nothrow) std::byte[byte_size == 0 ? 1 : byte_size]();
  if (data == nullptr) return AllocationFailure(0, byte_size, dtype, tensor.shape_);
  tensor.storage_ = std::shared_ptr<std::byte>(data, std::default_delete<std::byte[]>());
  tensor.data_ = data;
  return tensor;
}

Result<Tensor> Tensor::Adopt(DType dtype, Shape shape, std::span<std::byte> bytes,
                             std::shared_ptr<void> owner) {
  CONVGATE_RETURN_IF_ERROR(CheckByteSize(dtype, shape, bytes.size()));
  // An empty tensor may come with a null buffer; Allocate gives it a valid one.
  if (bytes.empty()) return Allocate(dtype, std::move(shape));
  Tensor tensor;
  tensor.dtype_ = dtype;
  tensor.shape_ = std::move(shape);
  tensor.byte_size_ = bytes.size();
  tensor.data_ = bytes.data();
  tensor.storage_ = std::move(owner);
  return tensor;
}

Result<Tensor> Tensor::FromBytes(DType dtype, Shape shape, std::span<const std::byte> bytes) {
  CONVGATE_RETURN_IF_ERROR(CheckByteSize(dtype, shape, bytes.size()));
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Allocate(dtype, std::move(shape)));
  if (!bytes.empty()) std::memcpy(tensor.data_, bytes.data(), bytes.size());
  return tensor;
}

Result<Tensor> Tensor::FromStrings(Shape shape, std::vector<std::string> values) {
  if (values.size() != static_cast<size_t>(shape.NumElements())) {
    return Status::InvalidArgument("string" + shape.ToString() + " needs " +
                                   std::to_string(shape.NumElements()) + " strings, got " +
                                   std::to_string(values.size()));
  }
  Tensor tensor;
  tensor.dtype_ = DType::kString;
  tensor.shape_ = std::move(shape);
  tensor.strings_ = std::move(values);
  return tensor;
}

Result<Tensor> TryClone(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString) {
    try {
      return Tensor::FromStrings(tensor.shape(),
                                 {tensor.strings().begin(), tensor.strings().end()});
    } catch (const std::bad_alloc&) {
      return AllocationFailure(tensor.strings().size(), 0, tensor.dtype(), tensor.shape());
    }
  }
  return Tensor::FromBytes(tensor.dtype(), tensor.shape(), tensor.bytes());
}

Tensor Tensor::Clone() const {
  Result<Tensor> copy = TryClone(*this);
  // Only allocation can fail here (the sizes match by construction): as operator new does, so
  // main() reports it as "out of memory", exit 3, never an abort.
  if (!copy.ok()) throw std::bad_alloc();
  return std::move(copy).value();
}

double Tensor::GetDouble(int64_t flat) const {
  const std::byte* base = data_;
  switch (dtype_) {
    case DType::kFloat32:
      return Load<float>(base, flat);
    case DType::kFloat64:
      return Load<double>(base, flat);
    case DType::kFloat16:
      return HalfToFloat(Load<uint16_t>(base, flat));
    case DType::kBFloat16:
      return BFloat16ToFloat(Load<uint16_t>(base, flat));
    case DType::kInt8:
      return Load<int8_t>(base, flat);
    case DType::kInt16:
      return Load<int16_t>(base, flat);
    case DType::kInt32:
      return Load<int32_t>(base, flat);
    case DType::kInt64:
      return static_cast<double>(Load<int64_t>(base, flat));
    case DType::kUInt8:
      return Load<uint8_t>(base, flat);
    case DType::kUInt16:
      return Load<uint16_t>(base, flat);
    case DType::kUInt32:
      return Load<uint32_t>(base, flat);
    case DType::kUInt64:
      return static_cast<double>(Load<uint64_t>(base, flat));
    case DType::kBool:
      return Load<uint8_t>(base, flat) != 0 ? 1.0 : 0.0;
    case DType::kString:
      break;  // excluded by the REQUIRES clause; NaN below keeps a misuse visible
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void Tensor::SetDouble(int64_t flat, double value) {
  std::byte* base = data_;
  switch (dtype_) {
    case DType::kFloat32:
      return Store<float>(base, flat, static_cast<float>(value));
    case DType::kFloat64:
      return Store<double>(base, flat, value);
    case DType::kFloat16:
      return Store<uint16_t>(base, flat, FloatToHalf(static_cast<float>(value)));
    case DType::kBFloat16:
      return Store<uint16_t>(base, flat, FloatToBFloat16(static_cast<float>(value)));
    case DType::kInt8:
      return Store<int8_t>(base, flat, ToInteger<int8_t>(value));
    case DType::kInt16:
      return Store<int16_t>(base, flat, ToInteger<int16_t>(value));
    case DType::kInt32:
      return Store<int32_t>(base, flat, ToInteger<int32_t>(value));
    case DType::kInt64:
      return Store<int64_t>(base, flat, ToInteger<int64_t>(value));
    case DType::kUInt8:
      return Store<uint8_t>(base, flat, ToInteger<uint8_t>(value));
    case DType::kUInt16:
      return Store<uint16_t>(base, flat, ToInteger<uint16_t>(value));
    case DType::kUInt32:
      return Store<uint32_t>(base, flat, ToInteger<uint32_t>(value));
    case DType::kUInt64:
      return Store<uint64_t>(base, flat, ToInteger<uint64_t>(value));
    case DType::kBool:
      return Store<uint8_t>(base, flat, value != 0.0 ? 1 : 0);
    case DType::kString:
      return;  // excluded by the REQUIRES clause: a string has no numeric value to set
  }
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && byte_size_ == other.byte_size_ &&
         strings_ == other.strings_ &&
         (byte_size_ == 0 || std::memcmp(data_, other.data_, byte_size_) == 0);
}

std::string Tensor::Describe() const { return std::string(DTypeName(dtype_)) + shape_.ToString(); }

Status TensorMap::Insert(std::string name, Tensor tensor) {
  if (Contains(name)) return Status::InvalidArgument("duplicate tensor name '" + name + "'");
  entries_.push_back({std::move(name), std::move(tensor)});
  return Status::OK();
}

void TensorMap::Append(std::string name, Tensor tensor) {
  entries_.push_back({std::move(name), std::move(tensor)});
}

void TensorMap::InsertOrAssign(std::string name, Tensor tensor) {
  if (Tensor* existing = Find(name)) {
    *existing = std::move(tensor);
    return;
  }
  entries_.push_back({std::move(name), std::move(tensor)});
}

const Tensor* TensorMap::Find(std::string_view name) const {
  for (const Entry& entry : entries_) {
    if (entry.name == name) return &entry.tensor;
  }
  return nullptr;
}

Tensor* TensorMap::Find(std::string_view name) {
  for (Entry& entry : entries_) {
    if (entry.name == name) return &entry.tensor;
  }
  return nullptr;
}

std::vector<std::string> TensorMap::Names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const Entry& entry : entries_) names.push_back(entry.name);
  return names;
}

TensorMap TensorMap::Clone() const {
  TensorMap copy;
  for (const Entry& entry : entries_) copy.entries_.push_back({entry.name, entry.tensor.Clone()});
  return copy;
}

Result<TensorMap> TryClone(const TensorMap& tensors) {
  try {
    return tensors.Clone();
  } catch (const std::bad_alloc&) {
    size_t bytes = 0;
    for (const TensorMap::Entry& entry : tensors) bytes += entry.tensor.byte_size();
    return Status::Unavailable("cannot allocate a copy of " + std::to_string(tensors.size()) +
                               " tensors of " + std::to_string(bytes) + " bytes in all");
  }
}

Result<Tensor> CastFloating(const Tensor& tensor, DType dtype) {
  if (!IsFloating(tensor.dtype()) || !IsFloating(dtype)) {
    return Status::InvalidArgument("cannot cast " + std::string(DTypeName(tensor.dtype())) +
                                   " to " + std::string(DTypeName(dtype)) +
                                   ": only floating dtypes are cast");
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor cast, Tensor::Allocate(dtype, tensor.shape()));
  const int64_t count = tensor.num_elements();
  for (int64_t i = 0; i < count; ++i) cast.SetDouble(i, tensor.GetDouble(i));
  return cast;
}

}  // namespace convgate
