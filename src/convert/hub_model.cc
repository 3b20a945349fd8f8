// FetchHubModel: the file, or the optimum-onnx export of the repository's PyTorch weights.
#include "convgate/convert/hub_model.h"

#include <nlohmann/json.hpp>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/graph/task.h"

namespace convgate::convert {
namespace {

namespace fs = std::filesystem;

// The files an export starts from, fetched at one commit.
struct ExportSource {
  std::string commit;
  std::string model_type;               // config.json's, "" when it names none
  std::vector<hub::FetchedFile> files;  // config.json and the weights first
};

// `file` of the repository at `revision`, or nullopt when the repository does not have it.
Result<std::optional<hub::FetchedFile>> FetchIfThere(const hub::HubOptions& options,
                                                     const hub::HfUri& uri,
                                                     const std::string& revision,
                                                     const std::string& file) {
  Result<hub::FetchedFile> fetched = hub::FetchFile(options, uri.repo_id, revision, file);
  if (fetched.ok()) return std::optional<hub::FetchedFile>(std::move(*fetched));
  if (fetched.status().code() == StatusCode::kNotFound) return std::optional<hub::FetchedFile>();
  return fetched.status();
}

std::string ModelTypeOf(const fs::path& config) {
  Result<std::string> text = ReadFile(config, kMaxTextFileBytes);
  if (!text.ok()) return "";
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object() || !json.contains("model_type") || !json["model_type"].is_string()) {
    return "";
  }
  return json["model_type"].get<std::string>();
}

// config.json and the weights (else `missing` says which is absent), then the side files, all at
// the commit config.json resolved to.
Result<ExportSource> FetchExportSource(const hub::HubOptions& options, const hub::HfUri& uri,
                                       std::string& missing) {
  ExportSource source;
  CONVGATE_ASSIGN_OR_RETURN(std::optional<hub::FetchedFile> config,
                            FetchIfThere(options, uri, uri.revision, "config.json"));
  if (!config) {
    missing = "no config.json";
    return source;
  }
  source.commit = config->commit;
  source.model_type = ModelTypeOf(config->path);
  source.files.push_back(std::move(*config));
  for (const char* weights : {"model.safetensors", "pytorch_model.bin"}) {
    CONVGATE_ASSIGN_OR_RETURN(std::optional<hub::FetchedFile> found,
                              FetchIfThere(options, uri, source.commit, weights));
    if (!found) continue;
    source.files.push_back(std::move(*found));
    break;
  }
  if (source.files.size() < 2) {
    missing = "no PyTorch weights (model.safetensors, pytorch_model.bin)";
    return source;
  }
  for (const char* side : kHubExportSideFiles) {
    CONVGATE_ASSIGN_OR_RETURN(std::optional<hub::FetchedFile> found,
                              FetchIfThere(options, uri, source.commit, side));
    if (found) source.files.push_back(std::move(*found));
  }
  return source;
}

// A folder holding exactly the export's files (symlinks into the hub cache): its digest, the
// conversion cache's key, is then fixed by the commit's bytes, whatever else the snapshot holds.
Result<TempDir> StageFolder(const ExportSource& source) {
  CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("hub-export"));
  for (const hub::FetchedFile& file : source.files) {
    std::error_code ec;
    fs::create_symlink(fs::absolute(file.path, ec), dir.path() / file.file, ec);
    if (ec) {
      return Status::Unavailable("cannot stage " + file.file + " for the export in " +
                                 dir.path().string() + ": " + ec.message());
    }
  }
  return dir;
}

hub::ModelOrigin ConvertedOrigin(const hub::HfUri& uri, std::string_view uri_text,
                                 const ExportSource& source, const ConversionRecord& record) {
  hub::ModelOrigin origin;
  origin.uri = std::string(uri_text);
  origin.repo_id = uri.repo_id;
  origin.revision = uri.revision;
  origin.commit = source.commit;
  origin.file = uri.file;
  origin.etag = record.output_sha256;  // no blob of the hub's: the export's own sha256
  origin.size = static_cast<uint64_t>(record.output_bytes);
  origin.how = "converted";
  for (const hub::FetchedFile& file : source.files) origin.converted_from.push_back(file.file);
  origin.converter = record.kind + ": " + record.tool;
  origin.converter_version = record.tool_version;
  origin.conversion_cache_hit = record.cache_hit;
  // The export's note "task <task> (<why>)": which task it took, and what decided it.
  constexpr std::string_view kTaskNote = "task ";
  for (const std::string& note : record.notes) {
    if (note.starts_with(kTaskNote)) origin.conversion_task = note.substr(kTaskNote.size());
  }
  return origin;
}

Result<HubModel> Export(const hub::HfUri& uri, std::string_view uri_text,
                        const ExportSource& source, const HubModelOptions& model_options,
                        ConversionError* conversion_error) {
  CONVGATE_ASSIGN_OR_RETURN(TempDir staged, StageFolder(source));
  ConversionRequest request;
  request.source = staged.path();
  request.kind = "optimum-onnx";
  request.params = {{"task", "auto"}};
  if (!model_options.model_type.empty()) request.params["model_type"] = model_options.model_type;
  request.timeout_seconds = model_options.timeout_seconds;
  request.cache_dir = model_options.cache_dir;
  ConversionRecord failed;
  Result<ConversionRecord> record = Convert(request, &failed);
  if (!record.ok()) {
    if (conversion_error != nullptr) *conversion_error = failed.error;
    // The task the export took and why, so a wrong guess can be steered (--model-type).
    const std::optional<graph::DetectedTask> task =
        graph::ResolveHfTask(staged.path(), model_options.model_type);
    const std::string steer =
        model_options.model_type.empty()
            ? "\n  if that task is wrong for the model, --model-type TYPE (bert, t5, gpt, vit, "
              "clip, whisper, wav2vec2) steers it"
            : "";
    const Status failed_status = record.status().WithContext(
        std::string(uri_text) + ": " + uri.file + " is not in " + uri.repo_id + " at commit " +
        source.commit + "; exporting its PyTorch weights (model type '" +
        (source.model_type.empty() ? "unknown" : source.model_type) + "'" +
        (task ? ", task " + task->task + ": " + task->evidence : "") + ") with optimum failed");
    return Status(failed_status.code(), failed_status.message() + steer);
  }
  HubModel model;
  model.path = record->output_path;
  model.hold = record->output_hold;
  model.origin = ConvertedOrigin(uri, uri_text, source, *record);
  model.conversion = std::move(*record);
  return model;
}

}  // namespace

Result<HubModel> FetchHubFolder(const hub::HubOptions& options, std::string_view uri_text) {
  CONVGATE_ASSIGN_OR_RETURN(hub::HfUri uri, hub::ParseHfRepoUri(uri_text));
  // config.json first, for the hub's own words when it is not there (offline and not cached, no
  // such repository, no access); FetchExportSource then finds it in the cache.
  Result<hub::FetchedFile> config =
      hub::FetchFile(options, uri.repo_id, uri.revision, "config.json");
  if (!config.ok()) {
    return config.status().WithContext(std::string(uri_text) +
                                       ": a Hugging Face model folder starts from config.json");
  }
  std::string missing;
  CONVGATE_ASSIGN_OR_RETURN(ExportSource source, FetchExportSource(options, uri, missing));
  if (!missing.empty()) {
    return Status::NotFound(std::string(uri_text) + ": " + uri.repo_id + " at " + uri.revision +
                            " has " + missing + ": not a Hugging Face model repository");
  }
  CONVGATE_ASSIGN_OR_RETURN(TempDir staged, StageFolder(source));
  HubModel model;
  model.path = staged.path();
  model.hold = std::make_shared<TempDir>(std::move(staged));
  model.origin.uri = std::string(uri_text);
  model.origin.repo_id = uri.repo_id;
  model.origin.revision = uri.revision;
  model.origin.commit = source.commit;
  model.origin.how = "cache";
  for (const hub::FetchedFile& file : source.files) {
    model.origin.size += file.size;
    if (file.downloaded) model.origin.how = "downloaded";
  }
  return model;
}

Result<HubModel> FetchHubModel(const hub::HubOptions& options, std::string_view uri_text,
                               const HubModelOptions& model_options,
                               ConversionError* conversion_error) {
  if (conversion_error != nullptr) *conversion_error = ConversionError::kNone;
  CONVGATE_ASSIGN_OR_RETURN(hub::HfUri uri, hub::ParseHfUri(uri_text));
  Result<hub::FetchedFile> fetched = hub::FetchFile(options, uri.repo_id, uri.revision, uri.file);
  const bool convertible = uri.file.ends_with(".onnx") && uri.file.find('/') == std::string::npos;
  if (fetched.ok() || fetched.status().code() != StatusCode::kNotFound || !convertible) {
    if (!fetched.ok()) return fetched.status().WithContext(std::string(uri_text));
    HubModel model;
    model.path = fetched->path;
    model.origin = hub::OriginOf(uri, *fetched);
    model.origin.uri = std::string(uri_text);
    return model;
  }
  std::string missing;
  CONVGATE_ASSIGN_OR_RETURN(ExportSource source, FetchExportSource(options, uri, missing));
  if (!missing.empty()) {
    return Status::NotFound(std::string(uri_text) + ": " + fetched.status().message() +
                            ", and the repository has " + missing + " to convert from");
  }
  return Export(uri, uri_text, source, model_options, conversion_error);
}

}  // namespace convgate::convert
