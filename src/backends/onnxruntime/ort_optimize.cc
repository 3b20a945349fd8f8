#include "convgate/backends/ort_optimize.h"

#include <onnxruntime_session_options_config_keys.h>

#include "backends/onnxruntime/ort_env.h"

namespace convgate::backends {
namespace {

GraphOptimizationLevel ToOrtLevel(OrtOptimizationLevel level) {
  switch (level) {
    case OrtOptimizationLevel::kBasic:
      return ORT_ENABLE_BASIC;
    case OrtOptimizationLevel::kExtended:
      return ORT_ENABLE_EXTENDED;
    case OrtOptimizationLevel::kAll:
      return ORT_ENABLE_ALL;
  }
  return ORT_ENABLE_ALL;
}

}  // namespace

Status WriteOrtOptimizedModel(const std::filesystem::path& source,
                              const std::filesystem::path& output, OrtOptimizationLevel level,
                              const std::string& external_data_file) {
  CONVGATE_ASSIGN_OR_RETURN(Ort::Env * env, GetOrtEnv());
  try {
    Ort::SessionOptions options;
    options.SetGraphOptimizationLevel(ToOrtLevel(level));
    options.SetOptimizedModelFilePath(output.c_str());
    if (!external_data_file.empty()) {
      // ORT's own default threshold (1024 bytes) decides which initializers go to the file.
      options.AddConfigEntry(kOrtSessionOptionsOptimizedModelExternalInitializersFileName,
                             external_data_file.c_str());
    }
    // Failures come back as exceptions (and a Status); ORT need not print them first.
    options.SetLogSeverityLevel(ORT_LOGGING_LEVEL_FATAL);
    // Loading from the path (not bytes) lets ORT find external data beside the model. The
    // session exists only to make ORT write the optimized graph.
    Ort::Session session(*env, source.c_str(), options);
  } catch (const Ort::Exception& error) {
    return OrtLoadError(error, source);
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("ONNX Runtime cannot load " + source.string() + ": out of memory");
  }
  return Status::OK();
}

std::string OrtRuntimeVersion() { return OrtVersionString(); }

}  // namespace convgate::backends
