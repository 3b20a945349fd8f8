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
};

inline constexpr DType kAllDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,    DType::kUInt16,
    DType::kUInt32,  DType::kUInt64,  DType::kBool,
};

// Bytes per element.
size_t DTypeSize(DType dtype);
// numpy's spelling: "float32", "float16", "bfloat16", "int64", "bool", ...
std::string_view DTypeName(DType dtype);
// Accepts DTypeName() spellings; nullopt for anything else.
std::optional<DType> ParseDType(std::string_view name);

bool IsFloating(DType dtype);  // float32/64, float16, bfloat16
bool IsInteger(DType dtype);   // signed and unsigned integers, not bool
bool IsSigned(DType dtype);    // floating types and signed integers

}  // namespace convgate
