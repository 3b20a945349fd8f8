// hf://org/name[@revision]/path: a repository file as a model path for the commands that load
// models.
#include <algorithm>
#include <string>

#include "convgate/hub/hub.h"

namespace convgate::hub {
namespace {

constexpr std::string_view kScheme = "hf://";

Status Malformed(std::string_view text, const std::string& why) {
  return Status::InvalidArgument("'" + std::string(text) + "': " + why +
                                 " (expected hf://org/name[@revision]/path/in/repo)");
}

// %2F (either case) back to '/': the one escape a revision needs in a URI path.
std::string DecodeSlashes(std::string text) {
  for (size_t pos = 0; (pos = text.find('%', pos)) != std::string::npos; ++pos) {
    if (text.compare(pos, 3, "%2F") == 0 || text.compare(pos, 3, "%2f") == 0) {
      text.replace(pos, 3, "/");
    }
  }
  return text;
}

}  // namespace

bool IsHfUri(std::string_view text) { return text.starts_with(kScheme); }

Result<HfUri> ParseHfUri(std::string_view text) {
  if (!IsHfUri(text)) return Malformed(text, "not an hf:// URI");
  const std::string_view rest = text.substr(kScheme.size());
  const size_t org_end = rest.find('/');
  // A revision in the first segment ends the id there: hf://name@rev/path is a repository
  // without an org (bert-base-uncased), which FormatHfUri writes so.
  const bool single_name = org_end != std::string_view::npos &&
                           rest.substr(0, org_end).find('@') != std::string_view::npos;
  const size_t name_end =
      org_end == std::string_view::npos || single_name ? org_end : rest.find('/', org_end + 1);
  if (name_end == std::string_view::npos) return Malformed(text, "no file in the repository");
  HfUri uri;
  std::string repo(rest.substr(0, name_end));
  const size_t at = repo.find('@');
  if (at != std::string::npos) {
    uri.revision = DecodeSlashes(repo.substr(at + 1));
    repo.resize(at);
  }
  uri.repo_id = repo;
  uri.file = std::string(rest.substr(name_end + 1));
  for (const Status& status :
       {CheckRepoId(uri.repo_id), CheckRevision(uri.revision), CheckRepoFile(uri.file)}) {
    if (!status.ok()) return Malformed(text, status.message());
  }
  return uri;
}

Result<HfUri> ParseHfRepoUri(std::string_view text) {
  if (!IsHfUri(text)) return Malformed(text, "not an hf:// URI");
  std::string rest(text.substr(kScheme.size()));
  HfUri uri;
  const size_t at = rest.find('@');
  // A revision's own '/' is written %2F (FormatHfUri), so a '/' after it, or past org/name, is
  // a file's path.
  const std::string raw_revision = at == std::string::npos ? "" : rest.substr(at + 1);
  if (at != std::string::npos) rest.resize(at);
  if (std::count(rest.begin(), rest.end(), '/') > 1 ||
      raw_revision.find('/') != std::string::npos) {
    return Malformed(text, "names a file, not a repository");
  }
  if (at != std::string::npos) uri.revision = DecodeSlashes(raw_revision);
  uri.repo_id = rest;
  for (const Status& status : {CheckRepoId(uri.repo_id), CheckRevision(uri.revision)}) {
    if (!status.ok()) return Malformed(text, status.message());
  }
  return uri;
}

bool LooksLikeHubId(std::string_view text) {
  // "models/missing.onnx" is a mistyped path, not a repository: a name ending like a model or data
  // file is read as a path (Hub names may hold dots, "bert-base.v2", but not such endings).
  for (const char* extension : {".onnx", ".pt", ".pt2", ".pth", ".ts", ".torchscript", ".xml",
                                ".bin", ".pb", ".npz", ".npy", ".json", ".yaml", ".safetensors"}) {
    if (text.ends_with(extension)) return false;
  }
  return !IsHfUri(text) && std::count(text.begin(), text.end(), '/') == 1 &&
         !text.starts_with('/') && !text.starts_with('.') && CheckRepoId(text).ok();
}

std::string FormatHfUri(const HfUri& uri) {
  std::string revision;
  for (const char c : uri.revision) revision += c == '/' ? std::string("%2F") : std::string(1, c);
  return std::string(kScheme) + uri.repo_id + "@" + revision + "/" + uri.file;
}

std::string ModelOrigin::PinnedUri() const {
  return FormatHfUri({.repo_id = repo_id, .revision = commit, .file = file});
}

ModelOrigin OriginOf(const HfUri& uri, const FetchedFile& fetched) {
  return ModelOrigin{.uri = FormatHfUri(uri),
                     .repo_id = uri.repo_id,
                     .revision = uri.revision,
                     .commit = fetched.commit,
                     .file = fetched.file,
                     .etag = fetched.etag,
                     .size = fetched.size,
                     .how = fetched.downloaded ? "downloaded" : "cache"};
}

}  // namespace convgate::hub
