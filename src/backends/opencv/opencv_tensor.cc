#include "backends/opencv/opencv_tensor.h"

#include <climits>
#include <cstring>
#include <optional>

namespace convgate::backends {
namespace {

std::optional<int> MatTypeFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return CV_32F;
    case DType::kFloat64:
      return CV_64F;
    case DType::kFloat16:
      return CV_16F;
    case DType::kInt8:
      return CV_8S;
    case DType::kInt16:
      return CV_16S;
    case DType::kInt32:
      return CV_32S;
    case DType::kUInt8:
    case DType::kBool:
      return CV_8U;
    case DType::kUInt16:
      return CV_16U;
    default:
      return std::nullopt;
  }
}

std::optional<DType> DTypeForDepth(int depth) {
  switch (depth) {
    case CV_32F:
      return DType::kFloat32;
    case CV_64F:
      return DType::kFloat64;
    case CV_16F:
      return DType::kFloat16;
    case CV_8S:
      return DType::kInt8;
    case CV_16S:
      return DType::kInt16;
    case CV_32S:
      return DType::kInt32;
    case CV_8U:
      return DType::kUInt8;
    case CV_16U:
      return DType::kUInt16;
    default:
      return std::nullopt;
  }
}

}  // namespace

Result<cv::Mat> MatFromTensor(const Tensor& tensor, const std::string& input_name) {
  std::optional<int> type = MatTypeFor(tensor.dtype());
  if (!type) {
    return Status::Unimplemented("input '" + input_name + "' is " + tensor.Describe() +
                                 "; OpenCV DNN takes float32/64, float16, int8/16/32, uint8/16 "
                                 "and bool inputs (a cv::Mat cannot hold " +
                                 std::string(DTypeName(tensor.dtype())) + ")");
  }
  std::vector<int> sizes;
  for (int64_t dim : tensor.shape().dims()) {
    if (dim > INT_MAX) {
      return Status::Unimplemented("input '" + input_name + "' has a dimension of " +
                                   std::to_string(dim) + ", beyond what a cv::Mat can index");
    }
    sizes.push_back(static_cast<int>(dim));
  }
  if (sizes.empty()) sizes.push_back(1);
  cv::Mat mat(static_cast<int>(sizes.size()), sizes.data(), *type);
  if (tensor.byte_size() > 0) std::memcpy(mat.data, tensor.bytes().data(), tensor.byte_size());
  return mat;
}

std::vector<int64_t> MatDims(const cv::Mat& mat) {
  std::vector<int64_t> dims;
  for (int axis = 0; axis < mat.dims; ++axis) dims.push_back(mat.size[axis]);
  return dims;
}

Result<Tensor> TensorFromMat(const cv::Mat& mat, const std::vector<int64_t>& dims,
                             const std::string& output_name) {
  std::optional<DType> dtype = DTypeForDepth(mat.depth());
  if (!dtype || mat.channels() != 1) {
    return Status::Unimplemented("output '" + output_name + "': OpenCV returned a matrix of type " +
                                 std::to_string(mat.type()) + ", which convgate has no dtype for");
  }
  CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(*dtype, std::move(shape)));
  const cv::Mat continuous = mat.isContinuous() ? mat : mat.clone();
  if (tensor.byte_size() != continuous.total() * continuous.elemSize()) {
    return Status::Internal("output '" + output_name + "': " + std::to_string(continuous.total()) +
                            " elements do not fill " + tensor.Describe());
  }
  if (tensor.byte_size() > 0)
    std::memcpy(tensor.bytes().data(), continuous.data, tensor.byte_size());
  return tensor;
}

}  // namespace convgate::backends
