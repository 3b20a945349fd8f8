// Element types convgate can hold, compare and serialize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace convgate {

enum class DType : uint8_t {
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
  // Variable-length byte strings (ONNX tensor(string), numpy str/bytes arrays). Not a number: it
  // has no element size and no numeric value, and Tensor keeps its elements outside the byte
  // buffer (see tensor.h).
  kString,
};

// Every numeric and bool dtype, i.e. every DType except kString. Code and tests iterate it to treat
// each element as a number (SetDouble, byte buffers, PRNG fills), which strings cannot do; code
// that also handles strings names DType::kString explicitly.
inline constexpr DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,    DType::kUInt16,
    DType::kUInt32,  DType::kUInt64,  DType::kBool,
};

// Bytes per element; 0 for kString, whose elements live outside the byte buffer.
size_t DTypeSize(DType dtype);
// numpy's spelling: "float32", "float16", "bfloat16", "int64", "bool", ...; "string" for kString.
std::string_view DTypeName(DType dtype);
// Accepts DTypeName() spellings, "string" included; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

// All three are false for bool and string.
bool IsFloating(DType dtype);  // float32/64, float16, bfloat16
bool IsInteger(DType dtype);   // signed and unsigned integers
bool IsSigned(DType dtype);    // floating types and signed integers

}  // namespace convgate
