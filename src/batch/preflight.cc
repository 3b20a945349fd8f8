#include "convgate/batch/preflight.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "convgate/core/file_util.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/graph/task.h"
#include "convgate/io/file_format.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

struct FileCheck {
  std::string sha256;
  std::optional<graph::ModelSummary> summary;  // for ONNX models
  std::string category;                        // "" when fine
  std::string text;
};

// A file (or model folder) the job will read. `is_model`: it must parse as a model format.
FileCheck CheckFile(const fs::path& path, bool is_model) {
  FileCheck check;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    check.category = "missing-file";
    check.text = path.string() + " does not exist";
    return check;
  }
  if (fs::is_directory(status)) return check;  // a model folder: its files are the runtime's
  if (!std::ifstream(path, std::ios::binary).good()) {
    check.category = "missing-file";
    check.text = path.string() + " is not readable";
    return check;
  }
  Result<std::string> sha = Sha256File(path);
  if (!sha.ok()) {
    check.category = "missing-file";
    check.text = sha.status().message();
    return check;
  }
  check.sha256 = *sha;
  if (!is_model) return check;
  Result<io::SniffedFile> sniffed = io::SniffFile(path);
  if (!sniffed.ok()) {
    check.category = "corrupt-file";
    check.text = sniffed.status().message();
    return check;
  }
  if (sniffed->format == io::FileFormat::kEmpty) {
    check.category = "corrupt-file";
    check.text = path.string() + " is empty (0 bytes)";
    return check;
  }
  if (sniffed->format != io::FileFormat::kOther) return check;  // a known format's magic
  // ONNX has no magic bytes: parse it.
  Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(path);
  if (!summary.ok()) {
    check.category = "corrupt-file";
    check.text = path.string() + " is not a readable model: " + summary.status().message();
    return check;
  }
  check.summary = std::move(*summary);
  return check;
}

std::optional<std::string> ModelTypeFromConfig(const fs::path& source) {
  const fs::path folder = fs::is_directory(source) ? source : source.parent_path();
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

ModelType DecideModelType(const ManifestEntry& entry,
                          const std::optional<graph::ModelSummary>& summary) {
  if (!entry.declared_model_type.empty()) return {entry.declared_model_type, "manifest"};
  if (std::optional<std::string> type = ModelTypeFromConfig(entry.source)) {
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

Preflight CheckEntry(const ManifestEntry& entry) {
  Preflight result;
  std::string all_hashes;
  std::optional<graph::ModelSummary> source_summary;
  std::vector<std::pair<fs::path, bool>> files = {{entry.source, true}};
  if (!entry.target.empty()) files.push_back({entry.target, true});
  for (const fs::path& extra : entry.extra_files) files.push_back({extra, false});
  for (size_t file_idx = 0; file_idx < files.size(); ++file_idx) {
    FileCheck check = CheckFile(files[file_idx].first, files[file_idx].second);
    if (!check.category.empty() && result.error_category.empty()) {
      result.error_category = check.category;
      result.error_text = check.text;
    }
    if (file_idx == 0) {
      result.model_sha256 = check.sha256;
      source_summary = std::move(check.summary);
    }
    all_hashes += files[file_idx].first.string() + '=' + check.sha256 + '\0';
  }
  result.files_sha256 = Sha256Hex(all_hashes);
  result.model_type = DecideModelType(entry, source_summary);
  return result;
}

}  // namespace convgate::batch
