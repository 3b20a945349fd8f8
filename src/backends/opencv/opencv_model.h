// A model loaded into OpenCV DNN (cv::dnn::readNetFromONNX), run on the CPU with OpenCV's own
// backend (DNN_BACKEND_OPENCV, DNN_TARGET_CPU).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <opencv2/dnn.hpp>
#include <string>
#include <vector>

#include "backends/opencv/opencv_layers.h"
#include "convgate/backends/backend.h"

namespace convgate::backends {

// signature() is the ONNX graph's declaration (graph::SummarizeOnnxModelBytes): cv::dnn::Net
// declares no input or output types or shapes. Outputs come back as OpenCV computed them (float32
// for nearly every layer, whatever the model declares), reshaped to the declared shape where the
// element count allows (opencv_tensor.h OutputDims).
//
// Intermediate tensors are fetched by the layer that computes them (opencv_layers.h). Requesting
// one keeps OpenCV from fusing that layer into its neighbours for that run, so the values are the
// unfused layer's.
//
// Thread safety: a cv::dnn::Net holds its inputs and activations, so Run calls are serialized by a
// mutex; load one Model per thread for parallel runs.
class OpenCvModel : public Model {
 public:
  static Result<std::unique_ptr<OpenCvModel>> Load(const std::filesystem::path& model_path,
                                                   const LoadOptions& options);

  const Signature& signature() const override { return signature_; }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override;

 private:
  OpenCvModel() = default;

  Status CheckInputs(const TensorMap& inputs) const;
  Result<std::vector<std::string>> LayersFor(const std::vector<std::string>& names) const;
  Result<std::string> LayerFor(const std::string& name) const;
  Result<TensorMap> Forward(const TensorMap& inputs, const std::vector<std::string>& names,
                            const std::vector<std::string>& layers);

  std::filesystem::path path_;
  Signature signature_;
  OpenCvLayerNames layer_names_;
  std::mutex mutex_;
  cv::dnn::Net net_;
};

}  // namespace convgate::backends
