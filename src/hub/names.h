// Repository ids, revisions and file paths as the hub spells them, checked before they become URLs
// or cache paths (a file named "../x" must not escape the snapshot folder), and the URLs built
// from them.
#pragma once

#include <string>
#include <string_view>

#include "convgate/core/status.h"
#include "convgate/hub/hub.h"  // CheckRepoId, CheckRevision, CheckRepoFile

namespace convgate::hub {

// An ETag header as a blob name: the weak prefix W/ and the quotes dropped (huggingface_hub's
// _normalize_etag).
std::string NormalizeEtag(std::string etag);
// Whether a normalized etag may name a file in blobs/: 1-128 letters, digits, '-' or '_'.
bool IsSafeEtag(const std::string& etag);

// 40 lower-case hex digits (a git commit or blob sha1).
bool IsCommitHash(std::string_view text);
// 64 lower-case hex digits (an LFS file's sha256).
bool IsSha256(std::string_view text);

// {endpoint}/{repo}/resolve/{revision}/{file}: the revision escaped whole ("refs/pr/1" ->
// "refs%2Fpr%2F1"), each path component of the file escaped, as huggingface_hub's hf_hub_url.
std::string ResolveUrl(std::string_view endpoint, std::string_view repo_id,
                       std::string_view revision, std::string_view file);
// {endpoint}/api/models/{repo}[/revision/{revision}]?blobs=true (blobs=true: sizes of the files).
std::string ModelInfoUrl(std::string_view endpoint, std::string_view repo_id,
                         std::string_view revision);

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string PercentEncode(std::string_view text);

}  // namespace convgate::hub
