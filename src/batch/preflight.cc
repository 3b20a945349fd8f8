#include "convgate/batch/preflight.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "convgate/convert/hub_model.h"
#include "convgate/core/file_hash.h"
#include "convgate/core/file_util.h"
#include "convgate/core/limits.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/graph/task.h"
#include "convgate/inspect/model_file.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

struct FileCheck {
  std::string sha256;
  std::optional<graph::ModelSummary> summary;  // for ONNX models
  std::string category;                        // "" when fine
  std::string text;
};

// An entry's inputs (an .npz is held to --max-run-bytes by the job) and policy (256 MiB): what
// the job's defaults could read at most.
uint64_t MaxExtraFileBytes() {
  return std::max<uint64_t>(static_cast<uint64_t>(DefaultSizeLimit()), kMaxWholeFileBytes);
}

// A file (or model folder) the job will read. `is_model`: the model file verification step
// (inspect/model_file.h); otherwise it must exist and be readable, and its sha256 is recorded.
FileCheck CheckFile(const fs::path& path, bool is_model) {
  FileCheck check;
  if (is_model) {
    inspect::ModelFileCheck verified = inspect::VerifyModelFile(path);
    check.sha256 = verified.sha256;
    check.summary = std::move(verified.onnx);
    check.category = verified.category;
    check.text = verified.problem;
    return check;
  }
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    check.category = "missing-file";
    check.text = path.string() + " does not exist";
    return check;
  }
  if (fs::is_directory(status)) return check;
  // A regular file of a size a job could read, checked before it is opened for its content: a
  // FIFO would block the whole preflight, /dev/zero never ends, a 40 GiB sparse file took a
  // minute to hash before the job refused its size.
  Result<std::string> sha =
      Sha256UserFile(path, MaxExtraFileBytes(), "the largest input or policy a job reads");
  if (!sha.ok()) {
    check.category = "missing-file";
    check.text = path.string() + " is not readable: " + sha.status().message();
    return check;
  }
  check.sha256 = *sha;
  return check;
}

std::optional<std::string> ModelTypeFromConfig(const fs::path& source) {
  std::error_code ec;  // a symlink loop or a path over PATH_MAX is the file check's to report
  const fs::path folder = fs::is_directory(source, ec) ? source : source.parent_path();
  Result<std::string> text = ReadFile(folder / "config.json", kMaxTextFileBytes);
  if (!text.ok()) return std::nullopt;
  const nlohmann::json config = nlohmann::json::parse(*text, nullptr, false);
  if (!config.is_object()) return std::nullopt;
  auto it = config.find("model_type");
  if (it != config.end() && it->is_string() && !it->get<std::string>().empty()) {
    return it->get<std::string>();
  }
  return std::nullopt;
}

// The category of a failed fetch: the file is not there, its bytes are wrong, or the hub failed.
std::string CategoryOfFetch(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return "missing-file";
    case StatusCode::kDataLoss:
      return "corrupt-file";
    case StatusCode::kInvalidArgument:
      return "usage";
    default:
      return "fetch-failed";
  }
}

// An hf:// file of the entry, fetched; `local` is where the checks read it.
struct HubFile {
  std::optional<hub::ModelOrigin> origin;
  fs::path local;
  std::shared_ptr<void> hold;  // a converted model's (ConversionRecord::output_hold)
  std::string category;        // "" when fetched
  std::string text;
};

// The hub settings of the environment, with the entry's deadline on every fetch.
Result<hub::HubOptions> HubOptionsUntil(std::chrono::steady_clock::time_point deadline) {
  CONVGATE_ASSIGN_OR_RETURN(hub::HubOptions options, hub::HubOptionsFromEnvironment(""));
  options.retry.deadline = deadline;
  return options;
}

// `model_type`: the entry's declared type, steering the task of an export (the job's own fetch,
// given the same type through JobArgs, then finds the export in the conversion cache).
HubFile FetchHubFile(const std::string& written, const std::string& model_type,
                     std::chrono::steady_clock::time_point deadline) {
  HubFile file;
  Result<hub::HubOptions> options = HubOptionsUntil(deadline);
  Status status = options.status();
  if (status.ok()) {
    // The file, or its export when the repository publishes no ONNX file (cached: the job's own
    // fetch finds it there).
    convert::ConversionError conversion_error = convert::ConversionError::kNone;
    convert::HubModelOptions model_options;
    model_options.model_type = model_type;
    Result<convert::HubModel> model =
        convert::FetchHubModel(*options, written, model_options, &conversion_error);
    if (model.ok()) {
      file.origin = std::move(model->origin);
      file.local = model->path;
      file.hold = model->hold;
      return file;
    }
    status = model.status();
    if (conversion_error != convert::ConversionError::kNone) {
      file.category = "convert-failed";
      file.text = status.message();
      return file;
    }
  }
  file.category = CategoryOfFetch(status);
  file.text = status.message();
  return file;
}

// config.json of the source's hub repository at the commit it resolved to, when there is one.
std::optional<fs::path> HubConfig(const std::vector<hub::ModelOrigin>& origins,
                                  const std::string& source,
                                  std::chrono::steady_clock::time_point deadline) {
  for (const hub::ModelOrigin& origin : origins) {
    if (origin.uri != source) continue;
    Result<hub::HubOptions> options = HubOptionsUntil(deadline);
    if (!options.ok()) return std::nullopt;
    Result<hub::FetchedFile> config =
        hub::FetchFile(*options, origin.repo_id, origin.commit, "config.json");
    if (config.ok()) return config->path;
  }
  return std::nullopt;
}

ModelType DecideModelType(const ManifestEntry& entry, const fs::path& source,
                          const std::optional<graph::ModelSummary>& summary) {
  if (!entry.declared_model_type.empty()) return {entry.declared_model_type, "manifest"};
  if (std::optional<std::string> type = ModelTypeFromConfig(source)) {
    return {*type, "config.json"};
  }
  if (summary) {
    if (std::optional<graph::DetectedTask> task =
            graph::DetectTask(summary->signature, summary->op_histogram)) {
      return {task->task, "graph"};
    }
  }
  for (const std::string& name : {entry.model_id, entry.source.filename().string()}) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::string type = ModelTypeFromName(lower); !type.empty()) return {type, "name"};
  }
  return {"", "none"};
}

}  // namespace

std::string ModelTypeFromName(std::string_view name) {
  // In the reference's order: the first rule that matches decides.
  struct Rule {
    std::string_view needle;
    std::string_view type;
  };
  constexpr Rule kRules[] = {{"bert", "bert"},       {"t5", "t5"},           {"gpt", "gpt"},
                             {"vit", "vit"},         {"vision", "vit"},      {"clip", "clip"},
                             {"whisper", "whisper"}, {"wav2vec", "wav2vec2"}};
  for (const Rule& rule : kRules) {
    if (name.find(rule.needle) != std::string_view::npos) return std::string(rule.type);
  }
  return "";
}

Preflight CheckEntry(const ManifestEntry& entry, double timeout_seconds) {
  const auto deadline = timeout_seconds > 0
                            ? std::chrono::steady_clock::now() +
                                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(timeout_seconds))
                            : std::chrono::steady_clock::time_point::max();
  Preflight result;
  std::string all_hashes;
  std::optional<graph::ModelSummary> source_summary;
  std::vector<std::pair<fs::path, bool>> files = {{entry.source, true}};
  if (!entry.target.empty()) files.push_back({entry.target, true});
  for (const fs::path& extra : entry.extra_files) files.push_back({extra, false});
  fs::path source_local = entry.source;
  for (size_t file_idx = 0; file_idx < files.size(); ++file_idx) {
    const std::string written = files[file_idx].first.string();
    FileCheck check;
    if (hub::IsHfUri(written)) {
      HubFile hub_file = FetchHubFile(written, entry.declared_model_type, deadline);
      if (hub_file.origin) {
        result.origins.push_back(*hub_file.origin);
        check = CheckFile(hub_file.local, files[file_idx].second);
      } else {
        check.category = hub_file.category;
        check.text = hub_file.text;
      }
      if (file_idx == 0) source_local = hub_file.local;
    } else {
      check = CheckFile(files[file_idx].first, files[file_idx].second);
    }
    if (!check.category.empty() && result.error_category.empty()) {
      result.error_category = check.category;
      result.error_text = check.text;
    }
    if (file_idx == 0) {
      result.model_sha256 = check.sha256;
      source_summary = std::move(check.summary);
    }
    all_hashes += written + '=' + check.sha256 + '\0';
  }
  result.files_sha256 = Sha256Hex(all_hashes);
  if (entry.declared_model_type.empty()) {
    if (std::optional<fs::path> config =
            HubConfig(result.origins, entry.source.string(), deadline)) {
      source_local = *config;
    }
  }
  result.model_type = DecideModelType(entry, source_local, source_summary);
  return result;
}

std::vector<std::string> JobArgs(const ManifestEntry& entry, const Preflight& preflight) {
  std::vector<std::string> args = entry.Args();
  // The declared type steers the job's own hub exports as it steered the preflight's.
  if (!entry.declared_model_type.empty() &&
      std::find(args.begin(), args.end(), "--model-type") == args.end()) {
    args.insert(args.end(), {"--model-type", entry.declared_model_type});
  }
  for (std::string& arg : args) {
    for (const hub::ModelOrigin& origin : preflight.origins) {
      if (arg == origin.uri) arg = origin.PinnedUri();
    }
  }
  return args;
}

}  // namespace convgate::batch
