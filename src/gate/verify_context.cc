// ReadVerifyContext: the orchestrator's pipeline_state.json, as OpenVINO's verify-conversion gate
// reads it in its Step 1 (model_id, optimum_supported), and where the result goes.
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "convgate/gate/verify.h"

namespace convgate::gate {

namespace fs = std::filesystem;

Result<VerifyContext> ReadVerifyContext(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    return Status::NotFound(path.string() +
                            ": no such file (--context names the orchestrator's "
                            "pipeline_state.json)");
  }
  std::ifstream in(path);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& parse) {
    return Status::InvalidArgument(path.string() + ": not JSON: " + parse.what());
  }
  if (!json.is_object()) return Status::InvalidArgument(path.string() + ": not a JSON object");
  VerifyContext context;
  context.path = path;
  context.out_dir = path.parent_path() / "verify-conversion";
  if (auto id = json.find("model_id"); id != json.end()) {
    if (!id->is_string() || id->get<std::string>().empty()) {
      return Status::InvalidArgument(path.string() + ": model_id must be a non-empty string");
    }
    context.model_id = id->get<std::string>();
    const fs::path beside = path.parent_path() / context.model_id;
    if (fs::path(context.model_id).is_relative() && !fs::exists(context.model_id, error) &&
        fs::exists(beside, error)) {
      context.model_id = beside.string();
    }
  }
  if (auto supported = json.find("optimum_supported"); supported != json.end()) {
    if (!supported->is_boolean()) {
      return Status::InvalidArgument(path.string() + ": optimum_supported must be true or false");
    }
    context.optimum_supported = supported->get<bool>();
  }
  return context;
}

}  // namespace convgate::gate
