// Tensors to and from cv::Mat for the "opencv" backend.
#pragma once

#include <cstdint>
#include <opencv2/core.hpp>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

// A copy of `tensor` as an N-dimensional Mat of the same element type. OpenCV DNN converts every
// input to float32 itself, so any type a Mat can hold works: float32/64, float16, int8/16/32,
// uint8/16, and bool (as uint8 0/1). Unimplemented naming the input for int64, uint32/64, bfloat16
// and strings, which a Mat cannot hold. A rank-0 or rank-1 tensor becomes an n x 1 matrix (a Mat
// has at least two dimensions).
Result<cv::Mat> MatFromTensor(const Tensor& tensor, const std::string& input_name);

// Copies a Mat (any layout) into a tensor of shape `dims`. REQUIRES: dims hold mat.total()
// elements. Unimplemented for a Mat type convgate has no dtype for.
Result<Tensor> TensorFromMat(const cv::Mat& mat, const std::vector<int64_t>& dims,
                             const std::string& output_name);

// The Mat's dims as int64 (mat.size[0..dims)).
std::vector<int64_t> MatDims(const cv::Mat& mat);

}  // namespace convgate::backends
