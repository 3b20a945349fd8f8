#include "convgate/batch/manifest.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "convgate/core/file_util.h"
#include "convgate/core/join.h"
#include "convgate/core/units.h"
#include "convgate/core/utf8.h"
#include "convgate/hub/hub.h"
#include "convgate/version.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

enum class Format { kJson, kYaml, kText };

const std::set<std::string> kYamlEntryKeys = {
    "id",     "model_id", "source",  "to",         "target", "command",   "params",    "inputs",
    "policy", "per_node", "timeout", "model_type", "flags",  "converter", "file_path", "revision"};
// Keys that name one model, so a default for every entry makes no sense.
const std::set<std::string> kEntryOnlyKeys = {"id", "model_id", "source", "file_path", "revision"};
const std::set<std::string> kJsonEntryKeys = {"id", "model_id", "file_path", "model_type",
                                              "revision"};
const std::set<std::string> kInputKeys = {"shapes", "dims",        "ranges", "val_range",
                                          "load",   "load_inputs", "seed",   "samples"};
const std::set<std::string> kPolicyKeys = {"file", "atol", "rtol"};

// Errors name the manifest, the line and the entry.
class Context {
 public:
  explicit Context(const fs::path& path) : path_(path.string()) {}
  Status Error(int line, const std::string& entry, const std::string& message) const {
    std::string text = path_;
    if (line > 0) text += ":" + std::to_string(line);
    text += ": ";
    if (!entry.empty()) text += "entry " + entry + ": ";
    return Status::InvalidArgument(text + message);
  }

 private:
  std::string path_;
};

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

Format FormatOf(const fs::path& path, const std::string& text) {
  const std::string ext = path.extension().string();
  if (ext == ".json") return Format::kJson;
  if (ext == ".yaml" || ext == ".yml") return Format::kYaml;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') return Format::kJson;
  return Format::kText;
}

bool IsIdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// An id names the job's result folder (OUT/<id>), so it keeps to [A-Za-z0-9._-].
std::string SafeId(std::string id) {
  for (char& c : id) {
    if (!IsIdChar(c)) c = '_';
  }
  if (id == "." || id == "..") id = "_";
  return id;
}

std::string DeriveId(std::string written_path) {
  if (hub::IsHfUri(written_path)) written_path.erase(0, 5);  // hf://org/name/m.onnx: org_name_m
  fs::path path(written_path);
  std::string id = (path.parent_path() / path.stem()).string();
  while (id.rfind("./", 0) == 0) id.erase(0, 2);
  while (id.rfind("../", 0) == 0) id.erase(0, 3);
  if (!id.empty() && id[0] == '/') id.erase(0, 1);
  return SafeId(id);
}

// A model path as written: hf:// URIs stay as they are (the preflight fetches them).
fs::path Resolve(const fs::path& base, const std::string& written) {
  const fs::path path(written);
  return path.is_absolute() || hub::IsHfUri(written) ? path : base / path;
}

// The reference's model_id + file_path (+ revision) as the hf:// URI every command takes.
Result<std::string> HubSource(const std::string& model_id, const std::string& file_path,
                              const std::string& revision) {
  if (model_id.empty()) return Status::InvalidArgument("file_path of the hub needs a model_id");
  hub::HfUri uri{
      .repo_id = model_id, .revision = revision.empty() ? "main" : revision, .file = file_path};
  const std::string text = hub::FormatHfUri(uri);
  CONVGATE_RETURN_IF_ERROR(hub::ParseHfUri(text).status());
  return text;
}

// One entry of a YAML (or JSON) manifest, read key by key.
class EntryReader {
 public:
  EntryReader(const Context& context, const fs::path& base, int index)
      : context_(context), base_(base), label_("#" + std::to_string(index + 1)) {}

  Result<ManifestEntry> ReadYaml(const YAML::Node& node, const YAML::Node& defaults) {
    entry_.line = LineOf(node);
    if (!node.IsMap()) return Error(node, "is not a mapping of settings");
    CONVGATE_RETURN_IF_ERROR(ReadLabel(node, "id"));
    std::map<std::string, YAML::Node> settings;
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (!kYamlEntryKeys.count(key)) {
        return Error(item.first,
                     "unknown key '" + key + "' (known: " + JoinComma(kYamlEntryKeys) + ")");
      }
      settings[key] = item.second;
    }
    if (defaults.IsDefined() && defaults.IsMap()) {
      for (const auto& item : defaults) settings.emplace(item.first.as<std::string>(), item.second);
    }
    return FromSettings(node, settings);
  }

  Result<ManifestEntry> ReadJson(const YAML::Node& node) {
    entry_.line = LineOf(node);
    if (!node.IsMap()) return Error(node, "is not an object");
    CONVGATE_RETURN_IF_ERROR(ReadLabel(node, "id"));
    if (entry_.id.empty()) CONVGATE_RETURN_IF_ERROR(ReadLabel(node, "model_id"));
    std::string file_path;
    std::string revision;
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (!kJsonEntryKeys.count(key)) {
        return Error(item.first,
                     "unknown key '" + key + "' (known: " + JoinComma(kJsonEntryKeys) + ")");
      }
      CONVGATE_ASSIGN_OR_RETURN(const std::string value, Scalar(item.second, key));
      if (key == "model_id") entry_.model_id = value;
      if (key == "file_path") file_path = value;
      if (key == "revision") revision = value;
      if (key == "model_type") entry_.declared_model_type = value;
    }
    if (file_path.empty()) return Error(node, "has no file_path");
    entry_.source = Resolve(base_, file_path);
    // The reference's entries name a file of the repository model_id; convgate's earlier ones a
    // file beside the manifest. A file that is there wins, unless a revision says "the hub".
    std::error_code ec;
    if (!revision.empty() || (!hub::IsHfUri(file_path) && !fs::path(file_path).is_absolute() &&
                              !fs::exists(entry_.source, ec))) {
      Result<std::string> uri = HubSource(entry_.model_id, file_path, revision);
      if (!uri.ok()) return Error(node, uri.status().message());
      entry_.source = *uri;
    }
    entry_.command = "run";
    if (entry_.id.empty()) entry_.id = DeriveId(file_path);
    if (entry_.model_id.empty()) entry_.model_id = entry_.id;
    return entry_;
  }

 private:
  Status Error(const YAML::Node& node, const std::string& message) const {
    return context_.Error(LineOf(node), label_, message);
  }

  // Names the entry in later errors by its id (or model id) once known.
  Status ReadLabel(const YAML::Node& node, const std::string& key) {
    if (!node[key]) return Status::OK();
    CONVGATE_ASSIGN_OR_RETURN(const std::string value, Scalar(node[key], key));
    if (value.empty()) return Error(node[key], key + " is empty");
    if (key == "id") {
      if (SafeId(value) != value) {
        return Error(node[key], "id '" + value +
                                    "' names the job's folder: use only letters, digits, '.', "
                                    "'_' and '-'");
      }
      entry_.id = value;
    } else if (entry_.id.empty()) {
      entry_.id = SafeId(value);
    }
    label_ = "'" + value + "'";
    return Status::OK();
  }

  Result<std::string> Scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) return Error(node, key + " must be a single value");
    return node.as<std::string>();
  }

  Result<bool> Bool(const YAML::Node& node, const std::string& key) const {
    CONVGATE_ASSIGN_OR_RETURN(const std::string text, Scalar(node, key));
    if (text == "true") return true;
    if (text == "false") return false;
    return Error(node, key + " must be true or false, not '" + text + "'");
  }

  // A list of values (or one value) for a repeatable flag.
  Status AddList(const YAML::Node& node, const std::string& key, const std::string& flag) {
    if (node.IsScalar()) {
      flags_.push_back({flag, node.as<std::string>()});
      return Status::OK();
    }
    if (!node.IsSequence()) return Error(node, key + " must be a value or a list of values");
    for (const auto& item : node) {
      CONVGATE_ASSIGN_OR_RETURN(const std::string value, Scalar(item, key));
      flags_.push_back({flag, value});
    }
    return Status::OK();
  }

  // atol: 1e-4, or atol: {logits: 1e-3, probs: 1e-4}.
  Status AddPerName(const YAML::Node& node, const std::string& key, const std::string& flag) {
    if (node.IsScalar()) {
      flags_.push_back({flag, node.as<std::string>()});
      return Status::OK();
    }
    if (!node.IsMap()) return Error(node, key + " must be a value or a mapping of name: value");
    for (const auto& item : node) {
      CONVGATE_ASSIGN_OR_RETURN(const std::string value, Scalar(item.second, key));
      flags_.push_back({flag, item.first.as<std::string>() + ":" + value});
    }
    return Status::OK();
  }

  Status ReadInputs(const YAML::Node& node) {
    if (!node.IsMap()) return Error(node, "inputs must be a mapping (shapes, dims, ranges, load)");
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      const YAML::Node& value = item.second;
      if (!kInputKeys.count(key)) {
        return Error(item.first,
                     "unknown key '" + key + "' in inputs (known: " + JoinComma(kInputKeys) + ")");
      }
      if (key == "shapes") CONVGATE_RETURN_IF_ERROR(AddList(value, key, "--shape"));
      if (key == "ranges" || key == "val_range") {
        CONVGATE_RETURN_IF_ERROR(AddList(value, key, "--val-range"));
      }
      if (key == "dims") {
        if (value.IsMap()) {
          for (const auto& dim : value) {
            CONVGATE_ASSIGN_OR_RETURN(const std::string size, Scalar(dim.second, "dims"));
            flags_.push_back({"--dim", dim.first.as<std::string>() + "=" + size});
          }
        } else {
          CONVGATE_RETURN_IF_ERROR(AddList(value, key, "--dim"));
        }
      }
      if (key == "load" || key == "load_inputs") {
        CONVGATE_ASSIGN_OR_RETURN(const std::string path, Scalar(value, key));
        entry_.extra_files.push_back(Resolve(base_, path));
        flags_.push_back({"--load-inputs", Resolve(base_, path).string()});
      }
      if (key == "seed" || key == "samples") {
        CONVGATE_ASSIGN_OR_RETURN(const std::string number, Scalar(value, key));
        flags_.push_back({"--" + key, number});
      }
    }
    return Status::OK();
  }

  Status ReadPolicy(const YAML::Node& node) {
    if (node.IsScalar()) {
      entry_.extra_files.push_back(Resolve(base_, node.as<std::string>()));
      flags_.push_back({"--policy", Resolve(base_, node.as<std::string>()).string()});
      return Status::OK();
    }
    if (!node.IsMap()) return Error(node, "policy must be a file or a mapping (file, atol, rtol)");
    for (const auto& item : node) {
      const std::string key = item.first.as<std::string>();
      if (!kPolicyKeys.count(key)) {
        return Error(item.first,
                     "unknown key '" + key + "' in policy (known: " + JoinComma(kPolicyKeys) + ")");
      }
    }
    // The file first: the flags layer on top of it (tolerance_flags.cc).
    if (node["file"]) {
      CONVGATE_ASSIGN_OR_RETURN(const std::string file, Scalar(node["file"], "file"));
      entry_.extra_files.push_back(Resolve(base_, file));
      flags_.push_back({"--policy", Resolve(base_, file).string()});
    }
    if (node["atol"]) CONVGATE_RETURN_IF_ERROR(AddPerName(node["atol"], "atol", "--atol"));
    if (node["rtol"]) CONVGATE_RETURN_IF_ERROR(AddPerName(node["rtol"], "rtol", "--rtol"));
    return Status::OK();
  }

  Result<ManifestEntry> FromSettings(const YAML::Node& node,
                                     const std::map<std::string, YAML::Node>& settings) {
    auto get = [&](const std::string& key) -> const YAML::Node* {
      auto it = settings.find(key);
      return it == settings.end() ? nullptr : &it->second;
    };
    std::string source;
    if (const YAML::Node* value = get("source")) {
      CONVGATE_ASSIGN_OR_RETURN(source, Scalar(*value, "source"));
    }
    if (const YAML::Node* value = get("model_id")) {
      CONVGATE_ASSIGN_OR_RETURN(entry_.model_id, Scalar(*value, "model_id"));
    }
    CONVGATE_RETURN_IF_ERROR(ReadHubFile(node, get("file_path"), get("revision"), source));
    if (source.empty()) return Error(node, "has no source (the model to verify)");
    entry_.source = Resolve(base_, source);
    if (entry_.id.empty()) {
      entry_.id = entry_.model_id.empty() ? DeriveId(source) : SafeId(entry_.model_id);
    }
    if (entry_.model_id.empty()) entry_.model_id = entry_.id;
    label_ = "'" + entry_.id + "'";
    if (const YAML::Node* value = get("to")) {
      CONVGATE_ASSIGN_OR_RETURN(entry_.to, Scalar(*value, "to"));
    }
    if (const YAML::Node* value = get("target")) {
      CONVGATE_ASSIGN_OR_RETURN(const std::string target, Scalar(*value, "target"));
      entry_.target = Resolve(base_, target);
    }
    if (const YAML::Node* value = get("converter")) {
      CONVGATE_ASSIGN_OR_RETURN(entry_.converter, Scalar(*value, "converter"));
    }
    if (int(!entry_.to.empty()) + int(!entry_.target.empty()) + int(!entry_.converter.empty()) >
        1) {
      return Error(node,
                   "has more than one of to (convert), converter (an external converter) and "
                   "target (already converted): give one");
    }
    entry_.command =
        entry_.to.empty() && entry_.target.empty() && entry_.converter.empty() ? "run" : "verify";
    if (const YAML::Node* value = get("command")) {
      CONVGATE_ASSIGN_OR_RETURN(entry_.command, Scalar(*value, "command"));
      if (entry_.command != "verify" && entry_.command != "compare" && entry_.command != "run") {
        return Error(*value,
                     "command must be verify, compare or run, not '" + entry_.command + "'");
      }
    }
    CONVGATE_RETURN_IF_ERROR(CheckCommand(node));
    if (const YAML::Node* value = get("model_type")) {
      CONVGATE_ASSIGN_OR_RETURN(entry_.declared_model_type, Scalar(*value, "model_type"));
    }
    if (const YAML::Node* value = get("timeout")) {
      CONVGATE_ASSIGN_OR_RETURN(const std::string text, Scalar(*value, "timeout"));
      Result<double> seconds = ParseDuration(text);
      if (!seconds.ok()) return Error(*value, "timeout: " + seconds.status().message());
      entry_.timeout_seconds = *seconds;
    }
    if (const YAML::Node* value = get("params")) {
      if (!value->IsMap()) return Error(*value, "params must be a mapping of name: value");
      for (const auto& item : *value) {
        CONVGATE_ASSIGN_OR_RETURN(const std::string param, Scalar(item.second, "params"));
        flags_.push_back({"--param", item.first.as<std::string>() + "=" + param});
      }
    }
    if (const YAML::Node* value = get("inputs")) CONVGATE_RETURN_IF_ERROR(ReadInputs(*value));
    if (const YAML::Node* value = get("policy")) CONVGATE_RETURN_IF_ERROR(ReadPolicy(*value));
    if (const YAML::Node* value = get("per_node")) {
      CONVGATE_ASSIGN_OR_RETURN(const bool per_node, Bool(*value, "per_node"));
      if (per_node) flags_.push_back({"--per-node", ""});
    }
    // Any other flag of the command, verbatim (backends, exec runners, limits).
    if (const YAML::Node* value = get("flags")) {
      if (!value->IsSequence()) return Error(*value, "flags must be a list of command-line words");
      for (const auto& item : *value) {
        CONVGATE_ASSIGN_OR_RETURN(const std::string word, Scalar(item, "flags"));
        flags_.push_back({word, ""});
      }
    }
    if (entry_.command == "run") {
      for (const auto& [flag, value] : flags_) {
        if (flag == "--policy" || flag == "--atol" || flag == "--rtol" || flag == "--per-node" ||
            flag == "--param") {
          return Error(
              node, "runs one model (no to or target): " + flag.substr(2) + " needs a comparison");
        }
      }
    }
    for (const auto& [flag, value] : flags_) {
      entry_.flags.push_back(flag);
      if (!value.empty()) entry_.flags.push_back(value);
    }
    return entry_;
  }

  // file_path (+ revision): the model is that file of the repository model_id, as hf://.
  Status ReadHubFile(const YAML::Node& node, const YAML::Node* file_path,
                     const YAML::Node* revision, std::string& source) {
    if (file_path == nullptr) {
      if (revision != nullptr) return Error(*revision, "revision needs file_path (a hub file)");
      return Status::OK();
    }
    if (!source.empty()) {
      return Error(node,
                   "has both source and file_path: give source (a path or hf:// URI) or "
                   "model_id + file_path (a file of that hub repository)");
    }
    CONVGATE_ASSIGN_OR_RETURN(const std::string file, Scalar(*file_path, "file_path"));
    std::string rev;
    if (revision != nullptr) {
      CONVGATE_ASSIGN_OR_RETURN(rev, Scalar(*revision, "revision"));
    }
    Result<std::string> uri = HubSource(entry_.model_id, file, rev);
    if (!uri.ok()) return Error(node, uri.status().message());
    source = *uri;
    return Status::OK();
  }

  Status CheckCommand(const YAML::Node& node) const {
    if (entry_.command == "compare" && entry_.target.empty()) {
      return Error(node, "command compare needs a target");
    }
    if (entry_.command != "verify" && (!entry_.to.empty() || !entry_.converter.empty())) {
      return Error(node,
                   "to or converter (a conversion) needs command verify, not " + entry_.command);
    }
    if (entry_.command == "verify" && entry_.to.empty() && entry_.target.empty() &&
        entry_.converter.empty()) {
      return Error(node, "command verify needs to, converter or target");
    }
    if (entry_.command == "run" && !entry_.target.empty()) {
      return Error(node, "command run takes no target");
    }
    return Status::OK();
  }

  const Context& context_;
  fs::path base_;
  std::string label_;
  ManifestEntry entry_;
  std::vector<std::pair<std::string, std::string>> flags_;  // (flag, value or "")
};

Result<std::vector<ManifestEntry>> ParseText(const std::string& text, const fs::path& base) {
  std::vector<ManifestEntry> entries;
  size_t start = 0;
  int line_number = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const size_t last = line.find_last_not_of(" \t\r");
    const std::string written = line.substr(first, last - first + 1);
    ManifestEntry entry;
    entry.id = DeriveId(written);
    entry.model_id = entry.id;
    entry.source = Resolve(base, written);
    entry.line = line_number;
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<ManifestEntry>> ParseYaml(const std::string& text, const Context& context,
                                             const fs::path& base, Format format) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return context.Error(e.mark.line + 1, "", "not valid YAML: " + e.msg);
  }
  YAML::Node list = root;
  YAML::Node defaults;
  if (format == Format::kYaml && root.IsMap()) {
    for (const auto& item : root) {
      const std::string key = item.first.as<std::string>();
      if (key != "defaults" && key != "models") {
        return context.Error(LineOf(item.first), "",
                             "unknown top-level key '" + key + "' (known: defaults, models)");
      }
    }
    // reset(), not "=": assigning a yaml-cpp Node writes through to the node it refers to.
    list.reset(root["models"]);
    defaults.reset(root["defaults"]);
    if (defaults.IsDefined() && !defaults.IsNull()) {
      if (!defaults.IsMap())
        return context.Error(LineOf(defaults), "", "defaults is not a mapping");
      for (const auto& item : defaults) {
        const std::string key = item.first.as<std::string>();
        if (!kYamlEntryKeys.count(key) || kEntryOnlyKeys.count(key)) {
          return context.Error(LineOf(item.first), "", "defaults: unknown key '" + key + "'");
        }
      }
    }
  }
  if (!list.IsDefined() || list.IsNull()) return std::vector<ManifestEntry>{};
  if (!list.IsSequence()) {
    return context.Error(
        LineOf(list), "",
        format == Format::kJson ? "not a JSON list of entries" : "models is not a list of entries");
  }
  std::vector<ManifestEntry> entries;
  int index = 0;
  for (const auto& node : list) {
    EntryReader reader(context, base, index++);
    Result<ManifestEntry> entry =
        format == Format::kJson ? reader.ReadJson(node) : reader.ReadYaml(node, defaults);
    if (!entry.ok()) return entry.status();
    entries.push_back(std::move(*entry));
  }
  return entries;
}

// nlohmann's message gives a byte offset; users want a line.
int LineAtByte(const std::string& text, size_t byte) {
  byte = std::min(byte, text.size());
  return 1 +
         static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(byte), '\n'));
}

}  // namespace

std::vector<std::string> ManifestEntry::Args() const {
  std::vector<std::string> args = {command, source.string()};
  if (command == "compare") args.push_back(target.string());
  if (command == "verify") {
    if (!to.empty()) args.insert(args.end(), {"--to", to});
    if (!converter.empty()) args.insert(args.end(), {"--converter", converter});
    if (!target.empty()) args.insert(args.end(), {"--target", target.string()});
  }
  args.insert(args.end(), flags.begin(), flags.end());
  return args;
}

std::string ManifestEntry::ContentHash() const {
  // The id is part of the content: two entries running the same command are still two entries.
  std::string text = "id=" + id + '\0';
  for (const std::string& arg : Args()) text += arg + '\0';
  text += "timeout=" + std::to_string(timeout_seconds);
  // A declared type steers a hub export's task, so it is content; absent, the key is as before.
  if (!declared_model_type.empty())
    text += std::string(1, '\0') + "model_type=" + declared_model_type;
  return Sha256Hex(text);
}

std::string ManifestEntry::Conversion() const {
  if (!to.empty()) return "to:" + to;
  if (!converter.empty()) return "converter:" + converter;
  if (!target.empty()) return "target:" + target.filename().string();
  return "";
}

std::map<std::string, std::string> ManifestEntry::Params() const {
  std::map<std::string, std::string> params;
  for (size_t idx = 0; idx < flags.size(); ++idx) {
    std::string value;
    if (flags[idx] == "--param" && idx + 1 < flags.size()) {
      value = flags[++idx];
    } else if (flags[idx].rfind("--param=", 0) == 0) {
      value = flags[idx].substr(8);
    } else {
      continue;
    }
    const size_t equals = value.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    params.emplace(value.substr(0, equals), value.substr(equals + 1));
  }
  return params;
}

Result<Manifest> ParseManifest(const std::string& text, const fs::path& path) {
  const Context context(path);
  const fs::path base = path.parent_path();
  const Format format = FormatOf(path, text);
  Result<std::vector<ManifestEntry>> entries = std::vector<ManifestEntry>{};
  if (format == Format::kText) {
    entries = ParseText(text, base);
  } else {
    if (format == Format::kJson) {
      // nlohmann says precisely what is wrong with JSON; yaml-cpp then reads the same document
      // (JSON is YAML) for the line of each entry.
      try {
        const nlohmann::json checked = nlohmann::json::parse(text);
        (void)checked;
      } catch (const nlohmann::json::parse_error& e) {
        return context.Error(LineAtByte(text, e.byte), "",
                             std::string("not valid JSON: ") + e.what());
      } catch (const nlohmann::json::exception& e) {  // a number out of range: 1e999
        return context.Error(0, "", std::string("not valid JSON: ") + e.what());
      }
    }
    // The readers take keys and values as text; a key that is a list or a mapping (YAML's
    // "? [a] : b") or a value of the wrong kind makes yaml-cpp throw: the manifest is wrong.
    try {
      entries = ParseYaml(text, context, base, format);
    } catch (const YAML::Exception& e) {
      return context.Error(e.mark.is_null() ? 0 : e.mark.line + 1, "",
                           "a key or value is not a single value where one is expected (a key "
                           "must be a plain name): " +
                               e.msg);
    }
  }
  if (!entries.ok()) return entries.status();
  // A NUL byte ("\u0000" in JSON, "\0" in YAML, a raw one in a text list) would silently cut a
  // path or argument where the job's command line is made: refused.
  for (const ManifestEntry& entry : *entries) {
    std::vector<std::string> texts = {
        entry.id, entry.model_id, entry.source.string(), entry.target.string(),
        entry.to, entry.converter};
    texts.insert(texts.end(), entry.flags.begin(), entry.flags.end());
    for (const fs::path& extra : entry.extra_files) texts.push_back(extra.string());
    for (const std::string& text : texts) {
      if (text.find('\0') != std::string::npos) {
        return context.Error(entry.line, "",
                             "'" + EscapeForDisplay(text) +
                                 "' holds a NUL byte, which no path or argument "
                                 "can hold");
      }
    }
  }
  std::map<std::string, int> first_line;
  for (const ManifestEntry& entry : *entries) {
    auto [it, inserted] = first_line.emplace(entry.id, entry.line);
    if (!inserted) {
      return context.Error(entry.line, "'" + entry.id + "'",
                           "duplicate id (first at line " + std::to_string(it->second) +
                               "): give each entry its own id");
    }
  }
  return Manifest{path, std::move(*entries)};
}

Result<Manifest> ReadManifest(const fs::path& path) {
  Result<std::string> text = ReadFile(path, kMaxTextFileBytes, "a manifest is text");
  if (!text.ok()) return text.status().WithContext("manifest");
  return ParseManifest(*text, path);
}

uint64_t ShardHash(const std::string& entry_id) {
  // FNV-1a 64: fixed by its definition on every platform and library, unlike std::hash.
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : entry_id) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::vector<int> ShardOfEntries(const std::vector<ManifestEntry>& entries, int count) {
  // Entries ranked by the hash of their id, cut into `count` runs of equal length (within one):
  // hash mod count left 7 entries in 3 shards as 1/1/5. An appended entry shifts each cut by at
  // most one place, so it moves at most count - 1 others.
  std::vector<size_t> ranked(entries.size());
  for (size_t idx = 0; idx < ranked.size(); ++idx) ranked[idx] = idx;
  std::sort(ranked.begin(), ranked.end(), [&entries](size_t a, size_t b) {
    const uint64_t hash_a = ShardHash(entries[a].id), hash_b = ShardHash(entries[b].id);
    return hash_a != hash_b ? hash_a < hash_b : entries[a].id < entries[b].id;
  });
  const size_t total = entries.size(), shards = static_cast<size_t>(std::max(count, 1));
  std::vector<int> shard_of(total, 0);
  for (size_t shard = 0; shard < shards; ++shard) {
    for (size_t rank = total * shard / shards; rank < total * (shard + 1) / shards; ++rank) {
      shard_of[ranked[rank]] = static_cast<int>(shard);
    }
  }
  return shard_of;
}

std::vector<ManifestEntry> SelectShard(const std::vector<ManifestEntry>& entries, int index,
                                       int count) {
  const std::vector<int> shard_of = ShardOfEntries(entries, count);
  std::vector<ManifestEntry> selected;
  for (size_t idx = 0; idx < entries.size(); ++idx) {
    if (shard_of[idx] == index) selected.push_back(entries[idx]);
  }
  return selected;
}

std::string EntryKey(const ManifestEntry& entry, const std::string& model_sha256,
                     const std::string& convgate_version) {
  return Sha256Hex(entry.ContentHash() + '\0' + model_sha256 + '\0' + convgate_version);
}

std::string VersionText() { return std::string(kVersion) + " (" + kBuildCommit + ")"; }

}  // namespace convgate::batch
