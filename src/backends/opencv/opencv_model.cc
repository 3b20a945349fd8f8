#include "backends/opencv/opencv_model.h"

#include <cstdlib>
#include <opencv2/core/utils/logger.hpp>

#include "backends/check_inputs.h"
#include "backends/opencv/opencv_message.h"
#include "backends/opencv/opencv_tensor.h"
#include "backends/opencv/output_dims.h"
#include "convgate/core/file_util.h"
#include "convgate/graph/nodes.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::backends {
namespace {

// OpenCV logs every import failure to stderr as well as throwing it; the exception becomes our
// Status, so the log would only repeat it. OPENCV_LOG_LEVEL, when the user sets it, still wins.
void QuietOpenCvLogs() {
  static const bool done = [] {
    const char* level = std::getenv("OPENCV_LOG_LEVEL");
    if (level == nullptr || level[0] == '\0') {
      cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_FATAL);
    }
    return true;
  }();
  (void)done;
}

// What a user can do about the two import failures PyTorch exports hit most often in 4.6.
std::string Remedy(const std::string& why) {
  if (why.find("[Identity@") != std::string::npos) {
    // torch.onnx.export writes Identity nodes over shared weights; 4.6 wants a computed input.
    return "; OpenCV 4.6 cannot import an Identity node whose input is a weight: `convgate "
           "transform MODEL --pass eliminate_identity -o OUT` removes them (the same "
           "computation)";
  }
  if (why.find("[Clip@") != std::string::npos) {
    return "; OpenCV 4.6 takes Clip's min and max only as attributes (opset 6-10): export at "
           "opset 10 or lower";
  }
  return "";
}

std::string CannotLoad(const std::filesystem::path& path, const std::string& why) {
  return path.string() + ": OpenCV DNN " + CV_VERSION + " cannot load this model: " + why +
         Remedy(why);
}

// Loading runs in this process. Every ONNX node conformance model of libonnx-testdata (1072) and
// truncated, empty, random and text files were loaded with OpenCV 4.6 while writing this: 465
// load, the rest throw cv::Exception, none aborts or crashes (its assertions throw; protobuf
// parse failures throw). So there is nothing to isolate in a child process; a model that did
// crash OpenCV would end convgate with a signal rather than a report.
Result<cv::dnn::Net> ReadNet(const std::string& bytes, const std::filesystem::path& path) {
  try {
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
    return net;
  } catch (const cv::Exception& error) {
    return Status::Unavailable(CannotLoad(path, CleanOpenCvMessage(error.what())));
  } catch (const std::exception& error) {
    return Status::Unavailable(CannotLoad(path, error.what()));
  }
}

}  // namespace

Result<std::unique_ptr<OpenCvModel>> OpenCvModel::Load(const std::filesystem::path& model_path,
                                                       const LoadOptions& options) {
  if (options.intra_op_threads < 0) {
    return Status::InvalidArgument("intra_op_threads must be >= 0, got " +
                                   std::to_string(options.intra_op_threads));
  }
  QuietOpenCvLogs();
  std::unique_ptr<OpenCvModel> model(new OpenCvModel());
  model->path_ = model_path;
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(model_path));
  CONVGATE_ASSIGN_OR_RETURN(graph::ModelSummary summary,
                            graph::SummarizeOnnxModelBytes(bytes, model_path));
  // OpenCV 4.6 has no external-data support: it imports such weights as empty matrices (seen
  // failing as "Matrix operand is an empty matrix"), so they are refused up front.
  if (summary.has_external_data) {
    return Status::Unimplemented(
        CannotLoad(model_path, "its weights are stored as external data (" +
                                   std::to_string(summary.external_data_files.size()) +
                                   " file(s)), which OpenCV DNN " + CV_VERSION + " does not read"));
  }
  model->signature_ = std::move(summary.signature);
  CONVGATE_ASSIGN_OR_RETURN(std::vector<graph::NodeInfo> nodes,
                            graph::ListNodes(bytes, model_path));
  model->layer_names_ = OpenCvLayerNames(std::move(nodes));
  CONVGATE_ASSIGN_OR_RETURN(model->net_, ReadNet(bytes, model_path));
  // Process-wide in OpenCV (its thread pool is global): the last model loaded decides.
  if (options.intra_op_threads > 0) cv::setNumThreads(options.intra_op_threads);
  for (const TensorInfo& output : model->signature_.outputs) {
    Result<std::string> layer = model->LayerFor(output.name);
    if (!layer.ok()) return Status::Unimplemented(CannotLoad(model_path, layer.status().message()));
  }
  return model;
}

Result<TensorMap> OpenCvModel::Run(const TensorMap& inputs,
                                   const std::vector<std::string>& output_names) {
  CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(signature_, inputs, path_));
  std::vector<std::string> names = output_names;
  if (names.empty()) {
    for (const TensorInfo& output : signature_.outputs) names.push_back(output.name);
  }
  CONVGATE_RETURN_IF_ERROR(CheckNoRepeats(names, path_));
  std::lock_guard<std::mutex> lock(mutex_);
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> layers, LayersFor(names));
  return Forward(inputs, names, layers);
}

Result<std::vector<std::string>> OpenCvModel::LayersFor(
    const std::vector<std::string>& names) const {
  std::vector<std::string> layers;
  for (const std::string& name : names) {
    Result<std::string> layer = LayerFor(name);
    if (!layer.ok()) return layer.status().WithContext(path_.string());
    layers.push_back(std::move(layer).value());
  }
  return layers;
}

// REQUIRES: mutex_ held, or no Run in progress (Load): the Net is not thread-safe.
Result<std::string> OpenCvModel::LayerFor(const std::string& name) const {
  // OpenCV adds an Identity layer named after every graph output.
  if (signature_.FindOutput(name) != nullptr && net_.getLayerId(name) >= 0) return name;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> candidates, layer_names_.CandidatesFor(name));
  for (const std::string& candidate : candidates) {
    if (net_.getLayerId(candidate) >= 0) return candidate;
  }
  return Status::NotFound("OpenCV DNN has no layer computing '" + name + "' (" +
                          layer_names_.DescribeProducer(name) +
                          "): its importer folded that node into a constant or fused it with "
                          "its neighbours");
}

Result<TensorMap> OpenCvModel::Forward(const TensorMap& inputs,
                                       const std::vector<std::string>& names,
                                       const std::vector<std::string>& layers) {
  std::vector<cv::Mat> mats;
  try {
    for (const TensorInfo& declared : signature_.inputs) {
      Result<cv::Mat> mat = MatFromTensor(*inputs.Find(declared.name), declared.name);
      if (!mat.ok()) return mat.status().WithContext(path_.string());
      net_.setInput(*mat, declared.name);
    }
    std::vector<cv::String> layer_names(layers.begin(), layers.end());
    net_.forward(mats, layer_names);
  } catch (const cv::Exception& error) {
    return Status::Unavailable("OpenCV DNN failed running " + path_.string() + ": " +
                               CleanOpenCvMessage(error.what()));
  } catch (const std::exception& error) {
    return Status::Unavailable("OpenCV DNN failed running " + path_.string() + ": " + error.what());
  }
  const SymbolValues symbols = BindSymbols(signature_, inputs);
  TensorMap outputs;
  for (size_t output_idx = 0; output_idx < names.size(); ++output_idx) {
    const std::string& name = names[output_idx];
    const cv::Mat& mat = mats[output_idx];
    const std::vector<int64_t> dims =
        OutputDims(signature_.FindOutput(name), MatDims(mat), symbols);
    Result<Tensor> tensor = TensorFromMat(mat, dims, name);
    if (!tensor.ok()) return tensor.status().WithContext(path_.string());
    CONVGATE_RETURN_IF_ERROR(outputs.Insert(name, std::move(tensor).value()));
  }
  return outputs;
}

}  // namespace convgate::backends
