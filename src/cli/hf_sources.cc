// hf:// model arguments (hub/hub.h HfUri) replaced by the local path of the fetched file, or of
// its optimum export when the repository publishes no ONNX file (convert/hub_model.h), before a
// command loads them, so every loader below sees a file.
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "convgate/convert/hub_model.h"

namespace convgate::cli {
namespace {

// The converted models' holds (ConversionRecord::output_hold): their files stay valid until the
// command ends.
std::vector<std::shared_ptr<void>>& Holds() {
  static std::vector<std::shared_ptr<void>> holds;
  return holds;
}

using Fetch = std::function<Result<convert::HubModel>(const hub::HubOptions&, std::string_view)>;

// Fetches `uri` with `fetch` under the environment's hub options and puts the local path in
// `path`, keeping the model's files alive and recording where it came from. A bad request is a
// usage error; anything else could not load. `read_as` (not empty) prefixes the failure.
std::optional<gate::GateError> FetchInto(const Fetch& fetch, const std::string& uri,
                                         const std::string& read_as, std::string& path,
                                         report::Invocation& invocation) {
  Result<hub::HubOptions> options = hub::HubOptionsFromEnvironment("");
  if (!options.ok()) {
    return gate::GateError{gate::Stage::kFlags, options.status().WithContext(path)};
  }
  Result<convert::HubModel> model = fetch(*options, uri);
  if (!model.ok()) {
    const bool usage = model.status().code() == StatusCode::kInvalidArgument;
    return gate::GateError{usage ? gate::Stage::kFlags : gate::Stage::kLoad,
                           read_as.empty() ? model.status() : model.status().WithContext(read_as)};
  }
  path = model->path.string();
  if (model->hold) Holds().push_back(model->hold);
  invocation.model_origins.push_back(std::move(model->origin));
  return std::nullopt;
}

}  // namespace

std::optional<gate::GateError> ResolveHfSource(std::string& path, report::Invocation& invocation,
                                               const std::string& model_type) {
  if (!hub::IsHfUri(path)) return std::nullopt;
  Result<hub::HfUri> uri = hub::ParseHfUri(path);
  if (!uri.ok()) return gate::GateError{gate::Stage::kFlags, uri.status()};
  const std::string spec = path;
  return FetchInto(
      [&model_type](const hub::HubOptions& options, std::string_view uri_text) {
        convert::HubModelOptions model_options;
        model_options.model_type = model_type;
        return convert::FetchHubModel(options, uri_text, model_options);
      },
      spec, "", path, invocation);
}

std::optional<ExitCode> FetchHfSource(std::string& path, report::Invocation& invocation,
                                      const std::string& model_type) {
  if (std::optional<gate::GateError> error = ResolveHfSource(path, invocation, model_type)) {
    return ReportError(error->stage, error->status);
  }
  return std::nullopt;
}

std::optional<gate::GateError> ResolveHfRepoSource(std::string& path,
                                                   report::Invocation& invocation) {
  std::string uri = path;
  std::error_code error;
  if (!hub::IsHfUri(path)) {
    if (std::filesystem::exists(path, error) || !hub::LooksLikeHubId(path)) return std::nullopt;
    uri = "hf://" + path;
  } else if (!hub::ParseHfRepoUri(path).ok()) {
    return std::nullopt;  // a file in a repository: ResolveHfSource's
  }
  // A bare id is also what a mistyped local path looks like: the message says how it was read.
  const std::string read_as =
      uri == path ? "" : "SOURCE " + path + " is no local path; read as the Hub id " + uri;
  return FetchInto(convert::FetchHubFolder, uri, read_as, path, invocation);
}

}  // namespace convgate::cli
