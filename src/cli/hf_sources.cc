// hf:// model arguments (hub/hub.h HfUri) replaced by the local path of the fetched file before a
// command loads them, so every loader below sees a file.
#include "cli/command.h"
#include "convgate/hub/hub.h"

namespace convgate::cli {

std::optional<ExitCode> FetchHfSource(std::string& path) {
  if (!hub::IsHfUri(path)) return std::nullopt;
  Result<hub::HfUri> uri = hub::ParseHfUri(path);
  if (!uri.ok()) return ReportError(gate::Stage::kFlags, uri.status());
  Result<std::filesystem::path> local = hub::FetchHfUri(path);
  if (!local.ok()) {
    const bool usage = local.status().code() == StatusCode::kInvalidArgument;
    return ReportError(usage ? gate::Stage::kFlags : gate::Stage::kLoad, local.status());
  }
  path = local->string();
  return std::nullopt;
}

}  // namespace convgate::cli
