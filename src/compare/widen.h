// Reads a run of tensor elements into a flat buffer of one wide type, so the comparison loops see
// plain arrays whatever the dtypes (and a later SIMD version can vectorize them).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "convgate/core/tensor.h"

namespace convgate::compare::internal {

// out[i] = element (begin + i) as double: fp16/bf16 widened exactly, integers converted (int64
// and uint64 beyond 2^53 round), bool as 0/1. REQUIRES: tensor.dtype() != kString,
// begin + out.size() <= num_elements().
void WidenToDouble(const Tensor& tensor, int64_t begin, std::span<double> out);

// out[i] = element (begin + i) of an integer or bool tensor as 64 bits: signed types are
// sign-extended (so the bits are the int64 value), unsigned types zero-extended, bool is 0/1.
// REQUIRES: IsInteger(tensor.dtype()) or bool, begin + out.size() <= num_elements().
void WidenToBits(const Tensor& tensor, int64_t begin, std::span<uint64_t> out);

// Whether WidenToBits stores this dtype as an int64 (true) or a uint64 (false).
bool BitsAreSigned(DType dtype);

// How the SIMD loops read a floating pair: in place when both sides are float32 (through
// Float32Run) or both aligned float64 (float32 widens in registers), otherwise through
// WidenToDouble buffers.
enum class PairLayout { kFloat32, kFloat64, kWidened };
PairLayout LayoutOf(const Tensor& source, const Tensor& target);

// Elements [begin, begin + size) of a float32 tensor: in place when tensor.IsAligned(), else
// copied into `scratch` (an .npz member read in place starts wherever its zip header ends; a
// misaligned float* is undefined behaviour). Copying a chunk that the loop then reads from cache
// costs little next to reading it from memory. REQUIRES: dtype float32, begin + size <=
// num_elements().
std::span<const float> Float32Run(const Tensor& tensor, int64_t begin, size_t size,
                                  std::vector<float>& scratch);

}  // namespace convgate::compare::internal
