#include "hub/names.h"

#include <cctype>

namespace convgate::hub {
namespace {

bool IsRepoIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

bool HasControl(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  }
  return false;
}

bool IsLowerHex(std::string_view text, size_t length) {
  if (text.size() != length) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace

Status CheckRepoId(std::string_view repo_id) {
  const std::string quoted = "repository id '" + std::string(repo_id) + "'";
  if (repo_id.empty() || repo_id.size() > 96) {
    return Status::InvalidArgument(quoted + ": must have 1 to 96 characters");
  }
  const size_t slash = repo_id.find('/');
  if (slash != std::string_view::npos && (slash == 0 || slash + 1 == repo_id.size() ||
                                          repo_id.find('/', slash + 1) != std::string_view::npos)) {
    return Status::InvalidArgument(quoted + ": must be 'name' or 'org/name'");
  }
  for (char c : repo_id) {
    if (c != '/' && !IsRepoIdChar(c)) {
      return Status::InvalidArgument(quoted +
                                     ": only letters, digits, '-', '_' and '.' are allowed");
    }
  }
  if (repo_id.find("--") != std::string_view::npos ||
      repo_id.find("..") != std::string_view::npos) {
    return Status::InvalidArgument(quoted + ": '--' and '..' are not allowed");
  }
  return Status::OK();
}

Status CheckRevision(std::string_view revision) {
  const Status bad = Status::InvalidArgument("revision '" + std::string(revision) +
                                             "': not a branch, tag or commit name");
  if (revision.empty() || revision.front() == '/' || HasControl(revision) ||
      revision.find("..") != std::string_view::npos || revision.size() > 256) {
    return bad;
  }
  // As git-check-ref-format: no empty part ("a//b", "v1/"), none starting with '.' ("./",
  // "a/.x"): such a name is no ref, and as a path under refs/ it would name a folder.
  size_t start = 0;
  while (start <= revision.size()) {
    size_t end = revision.find('/', start);
    if (end == std::string_view::npos) end = revision.size();
    const std::string_view part = revision.substr(start, end - start);
    if (part.empty() || part.front() == '.') return bad;
    start = end + 1;
  }
  return Status::OK();
}

Status CheckRepoFile(std::string_view file) {
  const std::string quoted = "file '" + std::string(file) + "'";
  if (file.empty() || HasControl(file) || file.find('\\') != std::string_view::npos) {
    return Status::InvalidArgument(quoted + ": not a path inside a repository");
  }
  size_t start = 0;
  while (start <= file.size()) {
    size_t end = file.find('/', start);
    if (end == std::string_view::npos) end = file.size();
    const std::string_view part = file.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return Status::InvalidArgument(quoted +
                                     ": empty, '.' and '..' path components are not allowed");
    }
    start = end + 1;
  }
  return Status::OK();
}

std::string NormalizeEtag(std::string etag) {
  if (etag.starts_with("W/")) etag = etag.substr(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

bool IsSafeEtag(const std::string& etag) {
  if (etag.empty() || etag.size() > 128) return false;
  for (char c : etag) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

bool IsCommitHash(std::string_view text) { return IsLowerHex(text, 40); }
bool IsSha256(std::string_view text) { return IsLowerHex(text, 64); }

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  return out;
}

std::string ResolveUrl(std::string_view endpoint, std::string_view repo_id,
                       std::string_view revision, std::string_view file) {
  std::string url = std::string(endpoint) + "/" + std::string(repo_id) + "/resolve/" +
                    PercentEncode(revision) + "/";
  size_t start = 0;
  while (true) {
    const size_t end = file.find('/', start);
    url += PercentEncode(file.substr(start, end - start));
    if (end == std::string_view::npos) break;
    url += '/';
    start = end + 1;
  }
  return url;
}

std::string ModelInfoUrl(std::string_view endpoint, std::string_view repo_id,
                         std::string_view revision) {
  std::string url = std::string(endpoint) + "/api/models/" + std::string(repo_id);
  if (!revision.empty()) url += "/revision/" + PercentEncode(revision);
  return url + "?blobs=true";
}

}  // namespace convgate::hub
