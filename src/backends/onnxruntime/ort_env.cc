#include "backends/onnxruntime/ort_env.h"

#include <stdlib.h>

namespace convgate::backends {
namespace {

struct EnvState {
  Ort::Env* env = nullptr;
  Status status;
};

EnvState CreateEnvState() {
  EnvState state;
  // Ort::Global<void>::api_ is null when libonnxruntime is older than the headers' API version;
  // every C++ API call would then crash.
  if (OrtGetApiBase()->GetApi(ORT_API_VERSION) == nullptr) {
    state.status = Status::Unavailable(
        "ONNX Runtime " + OrtVersionString() + " does not provide API version " +
        std::to_string(ORT_API_VERSION) + " that convgate was built against");
    return state;
  }
  // Official builds have telemetry on: the first Env writes /tmp/mat-debug-<pid>.log and, with a
  // command line over ~25 KB, overflows the stack (docs/architecture.md, Pitfalls). The variable
  // must be set before the Env exists; setenv overwrites so a stray "0" cannot re-enable it.
  // setenv is not safe against concurrent getenv in other threads, which is why the CLI also
  // sets it in main before any thread starts; here it covers library users.
  ::setenv("ORT_DISABLE_TELEMETRY", "1", 1);
  try {
    // Never destroyed: sessions may outlive static destruction order (a Model held by a static),
    // and ORT must not be torn down under them. The OS reclaims it at exit.
    state.env = new Ort::Env(ORT_LOGGING_LEVEL_ERROR, "convgate");
    state.env->DisableTelemetryEvents();
  } catch (const Ort::Exception& error) {
    state.status = Status::Unavailable("cannot create the ONNX Runtime environment: " +
                                       CleanOrtMessage(error.what()));
  }
  return state;
}

}  // namespace

Result<Ort::Env*> GetOrtEnv() {
  // C++11 guarantees this initialisation runs once even when threads race to it.
  static const EnvState state = CreateEnvState();
  if (!state.status.ok()) return state.status;
  return state.env;
}

std::string OrtVersionString() { return OrtGetApiBase()->GetVersionString(); }

Status OrtLoadError(const Ort::Exception& error, const std::filesystem::path& model_path) {
  const std::string message =
      "ONNX Runtime cannot load " + model_path.string() + ": " + CleanOrtMessage(error.what());
  switch (error.GetOrtErrorCode()) {
    case ORT_NO_SUCHFILE:
      return Status::NotFound(message);  // a file the model refers to
    case ORT_INVALID_PROTOBUF:
      return Status::DataLoss(message);
    case ORT_NOT_IMPLEMENTED:
      return Status::Unimplemented(message);  // no kernel for an op or opset
    case ORT_FAIL:  // graph resolution and shape inference errors are reported as FAIL
    case ORT_INVALID_ARGUMENT:
    case ORT_INVALID_GRAPH:
      return Status::InvalidArgument(message);
    default:
      return Status::Unavailable(message);
  }
}

}  // namespace convgate::backends
