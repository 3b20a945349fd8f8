#include "backends/runner/runner_protocol.h"

#include <nlohmann/json.hpp>

#include "convgate/core/dtype.h"
#include "convgate/core/json_field.h"

namespace convgate::backends {
namespace {

using nlohmann::json;

// How much of a line that is not the protocol a message quotes.
constexpr size_t kQuotedBytes = 200;

Status NotProtocol(std::string_view line, std::string_view why) {
  std::string quoted(line.substr(0, kQuotedBytes));
  if (line.size() > kQuotedBytes) quoted += "...";
  return Status::DataLoss("the runner's answer is not its protocol (" + std::string(why) +
                          "): " + quoted);
}

StatusCode CodeNamed(const std::string& name) {
  for (StatusCode code :
       {StatusCode::kInvalidArgument, StatusCode::kNotFound, StatusCode::kDataLoss,
        StatusCode::kUnimplemented, StatusCode::kFailedPrecondition, StatusCode::kUnavailable}) {
    if (name == StatusCodeName(code)) return code;
  }
  return StatusCode::kUnavailable;
}

Result<json> ParseLine(std::string_view line) {
  json parsed = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return NotProtocol(line, "not a JSON object");
  if (!parsed.contains("ok") || !parsed["ok"].is_boolean()) {
    return NotProtocol(line, "no \"ok\" field");
  }
  if (parsed["ok"].get<bool>()) return parsed;
  const std::string code = JsonTextOr(parsed, "code", "Unavailable");
  return Status(CodeNamed(code), JsonTextOr(parsed, "message", "(no message)"));
}

Result<TensorInfo> PortInfo(const json& port, std::string_view line) {
  if (!port.is_object() || !port.contains("name") || !port["name"].is_string() ||
      !port.contains("type") || !port["type"].is_string()) {
    return NotProtocol(line, "a port without a name or a type");
  }
  TensorInfo info;
  info.name = port["name"].get<std::string>();
  info.type_name = port["type"].get<std::string>();
  info.dtype = ParseDType(info.type_name);
  const json& shape = port.contains("shape") ? port["shape"] : json();
  if (shape.is_array()) {
    info.has_shape = true;
    for (const json& dim : shape) {
      if (dim.is_string() && !dim.get<std::string>().empty()) {
        info.shape.push_back(Dim::Symbolic(dim.get<std::string>()));
        continue;
      }
      if (!dim.is_number_integer()) {
        return NotProtocol(line, "a dimension that is neither an integer nor a symbol");
      }
      const int64_t value = dim.get<int64_t>();
      info.shape.push_back(value >= 0 ? Dim::Fixed(value) : Dim::Unknown());
    }
  }
  return info;
}

Status AddPorts(const json& hello, const char* key, std::string_view line,
                std::vector<TensorInfo>& ports) {
  if (!hello.contains(key) || !hello[key].is_array()) {
    return NotProtocol(line, std::string("no \"") + key + "\" list");
  }
  for (const json& port : hello[key]) {
    CONVGATE_ASSIGN_OR_RETURN(TensorInfo info, PortInfo(port, line));
    ports.push_back(std::move(info));
  }
  return Status::OK();
}

}  // namespace

Result<RunnerHello> ParseRunnerHello(std::string_view line) {
  CONVGATE_ASSIGN_OR_RETURN(json hello, ParseLine(line));
  RunnerHello parsed;
  parsed.version = JsonTextOr(hello, "version", "");
  parsed.settings = JsonTextOr(hello, "settings", "");
  CONVGATE_RETURN_IF_ERROR(AddPorts(hello, "inputs", line, parsed.signature.inputs));
  CONVGATE_RETURN_IF_ERROR(AddPorts(hello, "outputs", line, parsed.signature.outputs));
  // Outputs named by position only (a torch.export program's), matched by position as
  // TorchScript's are.
  parsed.signature.positional_outputs = JsonBoolOr(hello, "positional_outputs", false);
  return parsed;
}

Status ParseRunnerResponse(std::string_view line) { return ParseLine(line).status(); }

std::string RunnerRunRequest(const std::filesystem::path& inputs,
                             const std::filesystem::path& outputs,
                             const std::vector<std::string>& names) {
  // dump() escapes every name as JSON; names that are not UTF-8 are replaced rather than thrown on
  // (ONNX allows any bytes; a runtime would not find such a name anyway).
  const json request = {
      {"op", "run"}, {"inputs", inputs.string()}, {"outputs", outputs.string()}, {"names", names}};
  return request.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace convgate::backends
