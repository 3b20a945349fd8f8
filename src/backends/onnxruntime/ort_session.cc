#include "backends/onnxruntime/ort_session.h"

#include <onnxruntime_session_options_config_keys.h>

#include <vector>

#include "backends/onnxruntime/ort_env.h"
#include "backends/onnxruntime/ort_tensor.h"

namespace convgate::backends {
namespace {

struct OrtValueInfo {
  std::string name;
  bool is_tensor = false;
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

OrtValueInfo DescribeOrtValue(std::string name, const Ort::TypeInfo& type_info) {
  OrtValueInfo info;
  info.name = std::move(name);
  info.is_tensor = type_info.GetONNXType() == ONNX_TYPE_TENSOR;
  if (info.is_tensor) info.element_type = type_info.GetTensorTypeAndShapeInfo().GetElementType();
  return info;
}

std::vector<OrtValueInfo> SessionInputs(const Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<OrtValueInfo> inputs;
  for (size_t input_idx = 0; input_idx < session.GetInputCount(); ++input_idx) {
    inputs.push_back(DescribeOrtValue(session.GetInputNameAllocated(input_idx, allocator).get(),
                                      session.GetInputTypeInfo(input_idx)));
  }
  return inputs;
}

std::vector<OrtValueInfo> SessionOutputs(const Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<OrtValueInfo> outputs;
  for (size_t output_idx = 0; output_idx < session.GetOutputCount(); ++output_idx) {
    outputs.push_back(DescribeOrtValue(session.GetOutputNameAllocated(output_idx, allocator).get(),
                                       session.GetOutputTypeInfo(output_idx)));
  }
  return outputs;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

Status CompareValues(const std::vector<OrtValueInfo>& seen, const std::vector<TensorInfo>& declared,
                     std::string_view what, const std::filesystem::path& model_path) {
  std::vector<std::string> seen_names, declared_names;
  for (const OrtValueInfo& info : seen) seen_names.push_back(info.name);
  for (const TensorInfo& info : declared) declared_names.push_back(info.name);
  if (seen_names != declared_names) {
    return Status::Internal(model_path.string() + ": ONNX Runtime reports " + std::string(what) +
                            " [" + JoinNames(seen_names) + "] but the graph declares [" +
                            JoinNames(declared_names) + "]");
  }
  for (size_t value_idx = 0; value_idx < seen.size(); ++value_idx) {
    const std::optional<DType>& dtype = declared[value_idx].dtype;
    if (!dtype || !seen[value_idx].is_tensor) continue;  // non-tensors are refused at run time
    if (DTypeFromOrt(seen[value_idx].element_type) != dtype) {
      return Status::Internal(model_path.string() + ": ONNX Runtime reports " + std::string(what) +
                              " '" + seen[value_idx].name + "' as " +
                              OrtElementTypeName(seen[value_idx].element_type) +
                              " but the graph declares " + std::string(DTypeName(*dtype)));
    }
  }
  return Status::OK();
}

}  // namespace

namespace {

GraphOptimizationLevel OrtLevel(GraphOptimization level) {
  switch (level) {
    case GraphOptimization::kDisabled:
      return ORT_DISABLE_ALL;
    case GraphOptimization::kBasic:
      return ORT_ENABLE_BASIC;
    case GraphOptimization::kExtended:
      return ORT_ENABLE_EXTENDED;
    case GraphOptimization::kAll:
      return ORT_ENABLE_ALL;
  }
  return ORT_ENABLE_EXTENDED;
}

Ort::SessionOptions OptionsFor(const OrtSessionConfig& config) {
  Ort::SessionOptions options;
  options.SetIntraOpNumThreads(config.intra_op_threads);
  if (config.inter_op_threads > 1) {
    options.SetExecutionMode(ORT_PARALLEL);
    options.SetInterOpNumThreads(config.inter_op_threads);
  }
  options.SetGraphOptimizationLevel(OrtLevel(config.graph_optimization));
  // Every failure of a session comes back as an exception that becomes our Status; at the
  // environment's ERROR level ORT would print the same message to stderr first.
  options.SetLogSeverityLevel(ORT_LOGGING_LEVEL_FATAL);
  return options;
}

// Runs `make` (which builds the session from options) and turns ORT's failures into a Status.
template <typename Make>
Result<std::shared_ptr<Ort::Session>> MakeSession(const OrtSessionConfig& config, Make make) {
  try {
    Ort::SessionOptions options = OptionsFor(config);
    return make(options);
  } catch (const Ort::Exception& error) {
    return OrtLoadError(error, config.model_path);
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("ONNX Runtime cannot load " + config.model_path.string() +
                               ": out of memory");
  }
}

}  // namespace

Result<std::shared_ptr<Ort::Session>> CreateOrtSession(Ort::Env& env, const std::string& bytes,
                                                       const OrtSessionConfig& config) {
  return MakeSession(config, [&](Ort::SessionOptions& options) {
    if (config.has_external_data) {
      std::filesystem::path folder = config.external_data_folder.empty()
                                         ? config.model_path.parent_path()
                                         : config.external_data_folder;
      if (folder.empty()) folder = ".";
      options.AddConfigEntry(kOrtSessionOptionsModelExternalInitializersFileFolderPath,
                             folder.c_str());
    }
    return std::make_shared<Ort::Session>(env, bytes.data(), bytes.size(), options);
  });
}

Result<std::shared_ptr<Ort::Session>> CreateOrtSessionFromFile(Ort::Env& env,
                                                               const OrtSessionConfig& config,
                                                               const std::filesystem::path& file) {
  const std::filesystem::path& path = file.empty() ? config.model_path : file;
  return MakeSession(config, [&](Ort::SessionOptions& options) {
    return std::make_shared<Ort::Session>(env, path.c_str(), options);
  });
}

Status CheckSessionMatchesGraph(const Ort::Session& session, const Signature& declared,
                                const std::filesystem::path& model_path) {
  try {
    CONVGATE_RETURN_IF_ERROR(
        CompareValues(SessionInputs(session), declared.inputs, "inputs", model_path));
    return CompareValues(SessionOutputs(session), declared.outputs, "outputs", model_path);
  } catch (const Ort::Exception& error) {
    return OrtLoadError(error, model_path);
  }
}

}  // namespace convgate::backends
