#include "hub/repo_info.h"

#include <nlohmann/json.hpp>

#include "convgate/core/json_field.h"
#include "hub/names.h"

namespace convgate::hub {
namespace {

using nlohmann::json;

std::string License(const json& info) {
  const auto card = info.find("cardData");
  if (card != info.end() && card->is_object()) {
    const auto license = card->find("license");
    if (license != card->end() && license->is_string()) return license->get<std::string>();
    if (license != card->end() && license->is_array() && !license->empty() &&
        license->front().is_string()) {
      return license->front().get<std::string>();
    }
  }
  const auto tags = info.find("tags");
  if (tags == info.end() || !tags->is_array()) return "";
  for (const json& tag : *tags) {
    if (tag.is_string() && tag.get<std::string>().starts_with("license:")) {
      return tag.get<std::string>().substr(8);
    }
  }
  return "";
}

std::optional<uint64_t> SiblingSize(const json& sibling) {
  const auto size = sibling.find("size");
  if (size != sibling.end() && size->is_number_unsigned()) return size->get<uint64_t>();
  const auto lfs = sibling.find("lfs");
  if (lfs != sibling.end() && lfs->is_object()) {
    const auto lfs_size = lfs->find("size");
    if (lfs_size != lfs->end() && lfs_size->is_number_unsigned()) return lfs_size->get<uint64_t>();
  }
  return std::nullopt;
}

Status ReadConfig(const json& info, RepoInfo& out) {
  const auto config = info.find("config");
  if (config == info.end() || !config->is_object()) return Status::OK();
  out.model_type = JsonTextOr(*config, "model_type", "");
  const auto architectures = config->find("architectures");
  if (architectures != config->end() && architectures->is_array()) {
    for (const json& name : *architectures) {
      if (name.is_string()) out.architectures.push_back(name.get<std::string>());
    }
  }
  return Status::OK();
}

Status ReadSiblings(const json& info, const std::string& repo_id, RepoInfo& out) {
  const auto siblings = info.find("siblings");
  if (siblings == info.end()) return Status::OK();
  if (!siblings->is_array()) {
    return Status::DataLoss("the hub's answer for " + repo_id + ": 'siblings' is not a list");
  }
  for (const json& sibling : *siblings) {
    const std::string name = sibling.is_object() ? JsonTextOr(sibling, "rfilename", "") : "";
    Status valid = CheckRepoFile(name);
    if (!valid.ok()) {
      return Status::DataLoss("the hub's answer for " + repo_id + ": " + valid.message());
    }
    out.files.push_back({name, SiblingSize(sibling)});
  }
  return Status::OK();
}

}  // namespace

Result<RepoInfo> ParseRepoInfo(std::string_view json_text, const std::string& repo_id) {
  const json info = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) {
    return Status::DataLoss("the hub's answer for " + repo_id + " is not a JSON object");
  }
  RepoInfo out;
  out.repo_id = repo_id;
  out.commit = JsonTextOr(info, "sha", "");
  if (!IsCommitHash(out.commit)) {
    return Status::DataLoss("the hub's answer for " + repo_id +
                            " has no commit ('sha' is not 40 hex digits)");
  }
  out.pipeline_tag = JsonTextOr(info, "pipeline_tag", "");
  out.license = License(info);
  CONVGATE_RETURN_IF_ERROR(ReadConfig(info, out));
  CONVGATE_RETURN_IF_ERROR(ReadSiblings(info, repo_id, out));
  return out;
}

}  // namespace convgate::hub
