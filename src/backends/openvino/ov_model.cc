#include "backends/openvino/ov_model.h"

#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "backends/check_inputs.h"
#include "backends/openvino/ov_common.h"
#include "convgate/core/units.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

constexpr char kDevice[] = "CPU";

// A compiled model and what a Run needs of it: one infer request, and where each name convgate
// may ask for is among its outputs.
struct Compiled {
  ov::CompiledModel compiled;
  ov::InferRequest request;
  std::unordered_map<std::string, size_t> output_index;
};

Result<Compiled> Compile(const fs::path& path, const std::shared_ptr<ov::Model>& model,
                         const ov::AnyMap& config) {
  Compiled result;
  try {
    result.compiled = SharedCore().compile_model(model, kDevice, config);
    result.request = result.compiled.create_infer_request();
  } catch (const std::exception& e) {
    const std::string message = CleanMessage(e.what());
    const std::string text = path.string() + ": OpenVINO cannot compile the model for " +
                             std::string(kDevice) + ": " + message;
    return message.find("not supported") != std::string::npos ? Status::Unimplemented(text)
                                                              : Status::InvalidArgument(text);
  }
  const std::vector<ov::Output<const ov::Node>> outputs = result.compiled.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::unordered_set<std::string> names = outputs[i].get_names();
    if (names.empty()) names.insert(PortName(outputs[i], i, false));
    for (const std::string& name : names) result.output_index.emplace(name, i);
  }
  return result;
}

// An ov::Tensor over `tensor`'s elements: its own memory when aligned (OpenVINO reads it in
// place), a copy otherwise (an .npz member read in place starts wherever its header ends), and
// a string tensor filled element by element.
ov::Tensor ToOvTensor(const Tensor& tensor, const ov::element::Type& element) {
  ov::Shape shape(tensor.shape().dims().begin(), tensor.shape().dims().end());
  if (tensor.dtype() == DType::kString) {
    ov::Tensor strings(ov::element::string, shape);
    std::string* out = strings.data<std::string>();
    for (size_t i = 0; i < tensor.strings().size(); ++i) out[i] = tensor.strings()[i];
    return strings;
  }
  std::span<const std::byte> bytes = tensor.bytes();
  if (bytes.empty()) return ov::Tensor(element, shape);  // no host pointer for zero elements
  if (tensor.IsAligned()) {
    return ov::Tensor(element, shape, const_cast<std::byte*>(bytes.data()));
  }
  ov::Tensor copy(element, shape);
  std::memcpy(copy.data(), bytes.data(), bytes.size());
  return copy;
}

// A copy of an output: the request's output memory is reused by the next Run.
Result<Tensor> FromOvTensor(const ov::Tensor& tensor, const std::string& name) {
  std::optional<DType> dtype = ElementDType(tensor.get_element_type());
  if (!dtype) {
    return Status::Unimplemented("output '" + name + "' has OpenVINO element type " +
                                 ElementTypeName(tensor.get_element_type()) +
                                 ", which convgate cannot hold");
  }
  const ov::Shape& ov_shape = tensor.get_shape();
  CONVGATE_ASSIGN_OR_RETURN(Shape shape,
                            Shape::Make(std::vector<int64_t>(ov_shape.begin(), ov_shape.end())));
  if (*dtype == DType::kString) {
    const std::string* data = tensor.data<const std::string>();
    return Tensor::FromStrings(std::move(shape),
                               std::vector<std::string>(data, data + tensor.get_size()));
  }
  return Tensor::FromBytes(*dtype, std::move(shape),
                           std::span<const std::byte>(static_cast<const std::byte*>(tensor.data()),
                                                      tensor.get_byte_size()));
}

class OpenVinoModel : public Model {
 public:
  OpenVinoModel(fs::path path, std::shared_ptr<ov::Model> model, Compiled compiled,
                ov::AnyMap config, const LoadOptions& options)
      : path_(std::move(path)),
        model_(std::move(model)),
        plain_(std::move(compiled)),
        config_(std::move(config)),
        options_(options),
        signature_(DescribeModel(*model_)) {
    free_requests_.push_back(plain_.request);
    settings_ = std::string(kDevice) + ", inference precision " +
                plain_.compiled.get_property(ov::hint::inference_precision).get_type_name();
    if (options.streams > 1) {
      settings_ +=
          ", " + std::to_string(plain_.compiled.get_property(ov::num_streams).num) + " streams";
    }
  }

  const Signature& signature() const override { return signature_; }
  std::string settings() const override { return settings_; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(signature_, inputs, path_));
    CONVGATE_RETURN_IF_ERROR(CheckNoRepeats(output_names, path_));
    CONVGATE_RETURN_IF_ERROR(CheckOutputsHoldable(signature_, output_names, path_));
    std::vector<std::string> names = output_names;
    if (names.empty()) {
      for (const TensorInfo& output : signature_.outputs) names.push_back(output.name);
    }
    if (Declared(names)) {
      // The model's own outputs: any free request of the plain model, so Runs from several
      // threads (a benchmark's streams) execute at once.
      CONVGATE_ASSIGN_OR_RETURN(ov::InferRequest request, TakeRequest());
      Result<TensorMap> results = RunOn(request, plain_.output_index, inputs, names);
      GiveBack(std::move(request));
      return results;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    CONVGATE_ASSIGN_OR_RETURN(Compiled * serving, ServingFor(names));
    return RunOn(serving->request, serving->output_index, inputs, names);
  }

  // Each Run takes its own infer request of the plain model (TakeRequest).
  bool concurrent_runs() const override { return true; }

 private:
  bool Declared(const std::vector<std::string>& names) const {
    for (const std::string& name : names) {
      if (plain_.output_index.count(name) == 0) return false;
    }
    return true;
  }

  // A free request of the plain model, made when every one is taken.
  Result<ov::InferRequest> TakeRequest() {
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      if (!free_requests_.empty()) {
        ov::InferRequest request = std::move(free_requests_.back());
        free_requests_.pop_back();
        return request;
      }
    }
    try {
      return plain_.compiled.create_infer_request();
    } catch (const std::exception& e) {
      return Status::Unavailable(
          path_.string() + ": OpenVINO cannot make an infer request: " + CleanMessage(e.what()));
    }
  }

  void GiveBack(ov::InferRequest request) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    free_requests_.push_back(std::move(request));
  }

  Result<TensorMap> RunOn(ov::InferRequest& request,
                          const std::unordered_map<std::string, size_t>& output_index,
                          const TensorMap& inputs, const std::vector<std::string>& names) {
    try {
      CONVGATE_RETURN_IF_ERROR(Feed(inputs, request));
      CONVGATE_RETURN_IF_ERROR(Infer(request));
      TensorMap results;
      for (const std::string& name : names) {
        const ov::Tensor tensor = request.get_output_tensor(output_index.at(name));
        Result<Tensor> copied = FromOvTensor(tensor, name);
        if (!copied.ok()) return copied.status().WithContext(path_.string());
        results.Append(name, std::move(copied).value());
      }
      return results;
    } catch (const std::exception& e) {
      return Status::Unavailable(path_.string() +
                                 ": OpenVINO failed running the model: " + CleanMessage(e.what()));
    }
  }

  // The compiled model that has every one of `names` among its outputs: the plain one, or one
  // compiled with the intermediate tensors added as outputs (Model::add_output). The last such
  // model is kept; asking for another set replaces it, so at most two copies of the weights live.
  Result<Compiled*> ServingFor(const std::vector<std::string>& names) {
    std::set<std::string> extra;
    for (const std::string& name : names) {
      if (plain_.output_index.count(name) == 0) extra.insert(name);
    }
    if (extra.empty()) return &plain_;
    if (extra_ && extra == extra_names_) return &*extra_;
    extra_.reset();
    CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<ov::Model> model, ReadOpenVinoModel(path_));
    for (const std::string& name : extra) {
      try {
        model->add_output(name);
      } catch (const std::exception& e) {
        return Status::NotFound(path_.string() + ": no tensor named '" + name + "' in the model (" +
                                CleanMessage(e.what()) + ")");
      }
    }
    CONVGATE_ASSIGN_OR_RETURN(Compiled compiled, Compile(path_, model, config_));
    for (const std::string& name : names) {
      if (compiled.output_index.count(name) == 0) {
        return Status::NotFound(path_.string() + ": no output named '" + name + "'");
      }
    }
    extra_ = std::move(compiled);
    extra_names_ = std::move(extra);
    return &*extra_;
  }

  // Binds each declared input, by position, to the sample's tensor of that name (or of another
  // of the port's tensor names): compiled models keep the read model's input order.
  Status Feed(const TensorMap& inputs, ov::InferRequest& request) {
    const std::vector<ov::Output<const ov::Node>> ports =
        std::const_pointer_cast<const ov::Model>(model_)->inputs();
    for (size_t i = 0; i < ports.size(); ++i) {
      const Tensor* tensor = inputs.Find(signature_.inputs[i].name);
      for (const std::string& other : ports[i].get_names()) {
        if (tensor == nullptr) tensor = inputs.Find(other);
      }
      if (tensor == nullptr) {
        return Status::FailedPrecondition(path_.string() + ": no value for input '" +
                                          signature_.inputs[i].name + "'");
      }
      request.set_input_tensor(i, ToOvTensor(*tensor, ports[i].get_element_type()));
    }
    return Status::OK();
  }

  // One inference, bounded by the run timeout: past it the request is cancelled.
  Status Infer(ov::InferRequest& request) {
    const double limit = options_.limits.run_timeout_seconds > 0
                             ? options_.limits.run_timeout_seconds
                             : options_.timeout_seconds;
    request.start_async();
    if (limit > 0 && !request.wait_for(std::chrono::milliseconds(
                         static_cast<int64_t>(std::min(limit, 1e9) * 1000.0)))) {
      request.cancel();
      try {
        request.wait();
      } catch (const std::exception&) {
        // ov::Cancelled: the cancellation asked for.
      }
      return Status::Unavailable(path_.string() +
                                 ": OpenVINO (running a sample) did not finish "
                                 "within " +
                                 FormatDuration(limit) + " and was cancelled (--run-timeout)");
    }
    request.wait();  // rethrows what the inference threw
    return Status::OK();
  }

  const fs::path path_;
  const std::shared_ptr<ov::Model> model_;
  Compiled plain_;
  const ov::AnyMap config_;
  const LoadOptions options_;
  const Signature signature_;
  std::string settings_;
  std::mutex mutex_;  // guards extra_ and its request
  std::mutex pool_mutex_;
  std::vector<ov::InferRequest> free_requests_;  // of plain_, beside plain_.request
  std::optional<Compiled> extra_;
  std::set<std::string> extra_names_;
};

}  // namespace

Result<std::unique_ptr<Model>> LoadOpenVinoInProcess(const fs::path& model_path,
                                                     const LoadOptions& options) {
  // f32 inference precision: the CPU plugin's default on machines with AVX512-BF16 or AMX is bf16,
  // which would compare bf16 arithmetic rather than the conversion.
  ov::AnyMap config = {ov::hint::inference_precision(ov::element::f32)};
  if (options.intra_op_threads > 0) {
    config.emplace(ov::inference_num_threads(options.intra_op_threads));
  }
  // Throughput: as many CPU streams as requests in flight, the threads shared among them.
  if (options.streams > 1) config.emplace(ov::num_streams(options.streams));
  try {
    CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<ov::Model> model, ReadOpenVinoModel(model_path));
    CONVGATE_ASSIGN_OR_RETURN(Compiled compiled, Compile(model_path, model, config));
    return std::unique_ptr<Model>(new OpenVinoModel(
        model_path, std::move(model), std::move(compiled), std::move(config), options));
  } catch (const std::exception& e) {
    return Status::Unavailable(model_path.string() + ": OpenVINO: " + CleanMessage(e.what()));
  }
}

std::string OpenVinoRuntimeVersion() {
  const std::string build = ov::get_openvino_version().buildNumber;
  return build.substr(0, build.find('-'));
}

}  // namespace convgate::backends
