// The libtorch backend in one translation unit: including torch/script.h costs ~15-20 s of
// compile time per TU (docs/architecture.md, Pitfalls): all that touches libtorch is here.
// c10::Error and std::exception are caught in this file and become Status.
#include "backends/torch/torch_backend.h"

#include <ATen/Parallel.h>
#include <torch/script.h>
#include <torch/version.h>

#include <cstring>
#include <mutex>
#include <set>
#include <sstream>

#include "convgate/core/file_util.h"

namespace convgate::backends {
namespace {

namespace fs = std::filesystem;

// c10::Error::what_without_backtrace() still holds, for an error inside forward(), "The following
// operation failed in the TorchScript interpreter." and two TorchScript tracebacks; the cause is
// the last "<Kind>Error: ..." line. Other errors are one line ("PytorchStreamReader failed ...").
std::string ConciseMessage(const std::string& text) {
  std::istringstream lines(text);
  std::string line, first, cause;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    line.erase(0, start);
    if (first.empty()) first = line;
    const size_t colon = line.find(": ");
    if (colon != std::string::npos && colon >= 5 && line.compare(colon - 5, 5, "Error") == 0 &&
        line.find(' ') >= colon) {
      cause = line;
    }
  }
  return cause.empty() ? first : cause;
}

std::string MessageOf(const c10::Error& error) {
  return ConciseMessage(error.what_without_backtrace());
}

std::optional<at::ScalarType> ToScalarType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return at::kFloat;
    case DType::kFloat64:
      return at::kDouble;
    case DType::kFloat16:
      return at::kHalf;
    case DType::kBFloat16:
      return at::kBFloat16;
    case DType::kInt8:
      return at::kChar;
    case DType::kInt16:
      return at::kShort;
    case DType::kInt32:
      return at::kInt;
    case DType::kInt64:
      return at::kLong;
    case DType::kUInt8:
      return at::kByte;
    case DType::kBool:
      return at::kBool;
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
    case DType::kString:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DType> FromScalarType(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return DType::kFloat32;
    case at::kDouble:
      return DType::kFloat64;
    case at::kHalf:
      return DType::kFloat16;
    case at::kBFloat16:
      return DType::kBFloat16;
    case at::kChar:
      return DType::kInt8;
    case at::kShort:
      return DType::kInt16;
    case at::kInt:
      return DType::kInt32;
    case at::kLong:
      return DType::kInt64;
    case at::kByte:
      return DType::kUInt8;
    case at::kBool:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

constexpr const char* kSupportedDTypes =
    "float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, bool";

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "none" : joined;
}

// libtorch's intra-op thread count is process-wide: the first model that asks for a count sets
// it, later requests keep it (every model of one convgate run asks for the same --threads).
void SetThreadsOnce(int threads) {
  static std::once_flag once;
  if (threads <= 0) return;
  std::call_once(once, [threads] { at::set_num_threads(threads); });
}

Result<torch::jit::Module> LoadModule(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(path.string() + ": no such file");
  // libtorch opens the path itself: a FIFO would block it, a device feed it forever.
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(path));
  try {
    torch::jit::Module module = torch::jit::load(path.string(), torch::kCPU);
    module.eval();
    return module;
  } catch (const c10::Error& error) {
    const std::string message = MessageOf(error);
    // Every archive-level failure comes from PytorchStreamReader: a truncated file (no zip
    // central directory), a zip of something else, a torch.save() checkpoint (no constants.pkl).
    if (message.find("PytorchStreamReader") != std::string::npos) {
      return Status::DataLoss(path.string() + ": not a TorchScript archive (" + message +
                              "); is it truncated, or not written by torch.jit.save?");
    }
    return Status::InvalidArgument(path.string() +
                                   ": libtorch cannot load this TorchScript model: " + message);
  } catch (const std::exception& error) {
    return Status::Unavailable(path.string() +
                               ": loading the TorchScript model failed: " + error.what());
  }
}

// forward()'s arguments after self, up to the first one with a default value (those keep it).
Result<Signature> ReadSignature(const torch::jit::Module& module, const std::string& path) {
  const c10::optional<torch::jit::Method> forward = module.find_method("forward");
  if (!forward.has_value()) {
    return Status::InvalidArgument(path + ": the TorchScript module has no forward() method");
  }
  Signature signature;
  signature.positional_inputs = true;
  signature.positional_outputs = true;
  const std::vector<c10::Argument>& arguments = forward->function().getSchema().arguments();
  for (size_t idx = 0; idx < arguments.size(); ++idx) {
    const c10::Argument& argument = arguments[idx];
    if (idx == 0 && argument.name() == "self") continue;
    if (argument.default_value().has_value()) break;
    TensorInfo info;
    info.name = argument.name();
    const bool is_tensor = argument.type()->kind() == c10::TypeKind::TensorType;
    info.type_name = is_tensor ? std::string(kUntypedTensor) : argument.type()->annotation_str();
    signature.inputs.push_back(std::move(info));
  }
  return signature;
}

Result<at::Tensor> ToTorchTensor(const Tensor& tensor, const std::string& name) {
  const std::optional<at::ScalarType> type = ToScalarType(tensor.dtype());
  if (!type.has_value()) {
    return Status::Unimplemented(
        "input '" + name + "' is " + std::string(DTypeName(tensor.dtype())) +
        ", which libtorch has no element type for (it takes " + kSupportedDTypes + ")");
  }
  try {
    at::Tensor out = torch::empty(tensor.shape().dims(), torch::TensorOptions().dtype(*type));
    if (tensor.byte_size() > 0) std::memcpy(out.data_ptr(), tensor.bytes().data(), out.nbytes());
    return out;
  } catch (const c10::Error& error) {
    return Status::Unavailable("input '" + name + "': " + MessageOf(error));
  }
}

Result<Tensor> FromTorchTensor(const at::Tensor& value, const std::string& name) {
  if (!value.defined()) {
    return Status::Unimplemented("output '" + name + "' is an undefined tensor (None)");
  }
  const std::optional<DType> dtype = FromScalarType(value.scalar_type());
  if (!dtype.has_value() || value.layout() != at::kStrided) {
    std::ostringstream kind;
    kind << value.scalar_type() << " " << value.layout();
    return Status::Unimplemented("output '" + name + "' is a " + kind.str() +
                                 " tensor, which convgate cannot hold (it holds dense " +
                                 kSupportedDTypes + ")");
  }
  try {
    const at::Tensor dense = value.to(at::kCPU).contiguous();
    CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dense.sizes().vec()));
    const auto* data = static_cast<const std::byte*>(dense.data_ptr());
    return Tensor::FromBytes(*dtype, std::move(shape),
                             std::span<const std::byte>(data, dense.nbytes()));
  } catch (const c10::Error& error) {
    return Status::Unavailable("output '" + name + "': " + MessageOf(error));
  }
}

// Appends every tensor of a Tensor, or of a (nested) tuple or list of them, in order.
Status Flatten(const c10::IValue& value, std::vector<at::Tensor>& tensors) {
  if (value.isTensor()) {
    tensors.push_back(value.toTensor());
    return Status::OK();
  }
  if (value.isTuple() || value.isList()) {
    const std::vector<c10::IValue> items =
        value.isTuple() ? value.toTupleRef().elements().vec() : value.toListRef().vec();
    for (const c10::IValue& item : items) CONVGATE_RETURN_IF_ERROR(Flatten(item, tensors));
    return Status::OK();
  }
  return Status::Unimplemented(std::string("forward() returned a ") + value.tagKind() +
                               " where convgate takes a Tensor, a tuple or list of Tensors, or a "
                               "Dict[str, Tensor]");
}

Result<TensorMap> CollectDict(const c10::IValue& value) {
  TensorMap outputs;
  for (const auto& item : value.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) {
      return Status::Unimplemented(
          "forward() returned a dict that is not Dict[str, Tensor]: convgate takes string keys "
          "and Tensor values");
    }
    const std::string name = item.key().toStringRef();
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, FromTorchTensor(item.value().toTensor(), name));
    CONVGATE_RETURN_IF_ERROR(outputs.Insert(name, std::move(tensor)));
  }
  return outputs;
}

// Names outputs by position (output_0, ...) or, for a Dict[str, Tensor], by key.
Result<TensorMap> CollectOutputs(const c10::IValue& value) {
  if (value.isGenericDict()) return CollectDict(value);
  std::vector<at::Tensor> tensors;
  CONVGATE_RETURN_IF_ERROR(Flatten(value, tensors));
  TensorMap outputs;
  for (size_t idx = 0; idx < tensors.size(); ++idx) {
    const std::string name = "output_" + std::to_string(idx);
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, FromTorchTensor(tensors[idx], name));
    CONVGATE_RETURN_IF_ERROR(outputs.Insert(name, std::move(tensor)));
  }
  return outputs;
}

Result<TensorMap> SelectOutputs(TensorMap outputs, const std::vector<std::string>& names) {
  TensorMap selected;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return Status::InvalidArgument("output '" + name + "' is requested twice");
    }
    Tensor* tensor = outputs.Find(name);
    if (tensor == nullptr) {
      return Status::NotFound("no output '" + name +
                              "' (the model returned: " + JoinNames(outputs.Names()) +
                              "; TorchScript exposes no intermediate tensors)");
    }
    CONVGATE_RETURN_IF_ERROR(selected.Insert(name, std::move(*tensor)));
  }
  return selected;
}

class TorchModel : public Model {
 public:
  TorchModel(std::string path, torch::jit::Module module, Signature signature)
      : path_(std::move(path)), module_(std::move(module)), signature_(std::move(signature)) {}

  const Signature& signature() const override { return signature_; }

  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override {
    Result<std::vector<c10::IValue>> arguments = ToArguments(inputs);
    if (!arguments.ok()) return arguments.status().WithContext(path_);
    c10::IValue result;
    try {
      torch::NoGradGuard no_grad;
      result = module_.forward(std::move(arguments).value());
    } catch (const c10::Error& error) {
      return Status::Unavailable(path_ + ": forward() failed: " + MessageOf(error));
    } catch (const std::exception& error) {
      // torch::jit::JITException (a std::runtime_error) carries errors raised by TorchScript code.
      return Status::Unavailable(path_ + ": forward() failed: " + ConciseMessage(error.what()));
    }
    Result<TensorMap> outputs = CollectOutputs(result);
    if (outputs.ok() && !output_names.empty()) {
      outputs = SelectOutputs(std::move(outputs).value(), output_names);
    }
    if (!outputs.ok()) return outputs.status().WithContext(path_);
    return outputs;
  }

 private:
  // The TensorMap's tensors in order, whatever their names (positional_inputs).
  Result<std::vector<c10::IValue>> ToArguments(const TensorMap& inputs) const {
    std::vector<std::string> declared;
    for (const TensorInfo& info : signature_.inputs) declared.push_back(info.name);
    if (inputs.size() != declared.size()) {
      return Status::FailedPrecondition("forward() takes " + std::to_string(declared.size()) +
                                        " input(s) by position (" + JoinNames(declared) +
                                        "), but " + std::to_string(inputs.size()) +
                                        " were given (" + JoinNames(inputs.Names()) + ")");
    }
    std::vector<c10::IValue> arguments;
    for (size_t idx = 0; idx < inputs.size(); ++idx) {
      const TensorInfo& info = signature_.inputs[idx];
      if (info.type_name != kUntypedTensor) {
        return Status::Unimplemented("forward() argument '" + info.name + "' is " + info.type_name +
                                     ": convgate passes tensors only");
      }
      CONVGATE_ASSIGN_OR_RETURN(at::Tensor tensor,
                                ToTorchTensor(inputs[idx].tensor, inputs[idx].name));
      arguments.emplace_back(std::move(tensor));
    }
    return arguments;
  }

  std::string path_;
  torch::jit::Module module_;
  Signature signature_;
};

class TorchBackend : public Backend {
 public:
  std::string name() const override { return "torch"; }
  std::string version() const override { return TORCH_VERSION; }
  bool SupportsIntermediates() const override { return false; }

  Result<std::unique_ptr<Model>> Load(const fs::path& model_path,
                                      const LoadOptions& options) override {
    SetThreadsOnce(options.intra_op_threads);
    CONVGATE_ASSIGN_OR_RETURN(torch::jit::Module module, LoadModule(model_path));
    CONVGATE_ASSIGN_OR_RETURN(Signature signature, ReadSignature(module, model_path.string()));
    return std::unique_ptr<Model>(
        new TorchModel(model_path.string(), std::move(module), std::move(signature)));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateTorchBackend() { return std::make_unique<TorchBackend>(); }

}  // namespace convgate::backends
