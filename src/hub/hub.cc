// FetchFile, FileExists and FetchRepoInfo: the cache first where huggingface_hub would use it, then
// one HEAD of the resolve URL for the commit, etag and size, then the blob's download.
#include "convgate/hub/hub.h"

#include <algorithm>

#include "convgate/core/utf8.h"
#include "hub/cache_layout.h"
#include "hub/download.h"
#include "hub/http.h"
#include "hub/names.h"
#include "hub/repo_info.h"
#include "hub/retry.h"

namespace convgate::hub {
namespace {

// The API answer is a few KiB; 64 MiB is far beyond any real one and still bounds memory.
constexpr uint64_t kMaxApiBytes = uint64_t{64} << 20;

std::string Describe(const std::string& repo_id, const std::string& revision,
                     const std::string& file) {
  return "'" + file + "' of " + repo_id + " at " + revision;
}

Status CheckIds(const std::string& repo_id, const std::string& revision, const std::string& file) {
  CONVGATE_RETURN_IF_ERROR(CheckRepoId(repo_id));
  CONVGATE_RETURN_IF_ERROR(CheckRevision(revision));
  return CheckRepoFile(file);
}

HttpRequest HubRequest(const HubOptions& options, std::string url) {
  return HttpRequest{.url = std::move(url),
                     .token = options.token,
                     .token_origin = UrlOrigin(options.endpoint),
                     .stall_timeout_seconds = options.retry.stall_timeout_seconds,
                     .deadline = options.retry.deadline};
}

// HEAD of the resolve URL, same-origin redirects followed (a renamed repository), a redirect to
// another origin (the CDN) returned: its headers are the hub's, its Location where the bytes are.
Result<HttpResponse> HeadResolve(const HubOptions& options, const std::string& repo_id,
                                 const std::string& revision, const std::string& file) {
  HttpRequest request = HubRequest(options, ResolveUrl(options.endpoint, repo_id, revision, file));
  request.head = true;
  request.follow_cross_origin = false;
  return WithRetries(options.retry, "HEAD " + Describe(repo_id, revision, file),
                     [&] { return Perform(request, nullptr); });
}

bool Answered(const HttpResponse& response) {
  return response.transport == TransportError::kNone && response.status >= 200 &&
         response.status < 400;
}

std::string Header(const Headers& headers, const char* name) {
  const auto found = headers.find(name);
  return found == headers.end() ? "" : found->second;
}

// What the HEAD said: the blob to download.
Result<BlobSpec> ReadResolved(const HttpResponse& response, const std::string& what,
                              std::string& commit) {
  commit = Header(response.headers, "x-repo-commit");
  if (!IsCommitHash(commit)) {
    return Status::Unavailable(what +
                               ": the answer has no X-Repo-Commit (is HF_ENDPOINT a "
                               "Hugging Face hub?)");
  }
  BlobSpec blob;
  blob.etag = NormalizeEtag(Header(response.headers, "x-linked-etag"));
  if (blob.etag.empty()) blob.etag = NormalizeEtag(Header(response.headers, "etag"));
  if (!IsSafeEtag(blob.etag)) {
    return Status::Unavailable(what + ": the hub's ETag '" + EscapeForDisplay(blob.etag) +
                               "' is missing or not a blob name");
  }
  std::string size = Header(response.headers, "x-linked-size");
  if (size.empty()) size = Header(response.headers, "content-length");
  try {
    size_t used = 0;
    blob.size = std::stoull(size, &used);
    if (used != size.size()) throw std::invalid_argument(size);
  } catch (const std::exception&) {
    return Status::Unavailable(what + ": the hub sent no size (X-Linked-Size, Content-Length)");
  }
  blob.url = response.url;
  if (response.status >= 300) {
    CONVGATE_ASSIGN_OR_RETURN(blob.url,
                              ResolveLocation(response.url, Header(response.headers, "location")));
  }
  return blob;
}

FetchedFile FromCache(const CachedFile& cached, const std::string& file, bool requested) {
  FetchedFile fetched{
      .file = file, .commit = cached.commit, .path = cached.path, .requested = requested};
  std::error_code ec;
  fetched.etag = fs::read_symlink(cached.path, ec).filename().string();
  fetched.size = static_cast<uint64_t>(fs::file_size(cached.path, ec));
  return fetched;
}

Status OfflineMiss(const RepoCache& cache, const std::string& what) {
  return Status::NotFound("HF_HUB_OFFLINE is set and " + what + " is not in the cache (" +
                          cache.repo.string() + ")");
}

}  // namespace

Result<FetchedFile> FetchFile(const HubOptions& options, const std::string& repo_id,
                              const std::string& revision, const std::string& file) {
  CONVGATE_RETURN_IF_ERROR(CheckIds(repo_id, revision, file));
  const RepoCache cache(options.cache_dir, repo_id);
  const std::string what = Describe(repo_id, revision, file);
  // Offline, and for a commit (which never changes), the cache answers with no request.
  if (options.offline || IsCommitHash(revision)) {
    if (auto cached = FindCached(cache, revision, file)) return FromCache(*cached, file, false);
    if (options.offline) return OfflineMiss(cache, what);
  }
  CONVGATE_ASSIGN_OR_RETURN(HttpResponse head, HeadResolve(options, repo_id, revision, file));
  if (!Answered(head)) {
    return HttpFailure(head, what, !options.token.empty(), options.retry.attempts);
  }
  FetchedFile fetched{.file = file, .requested = true};
  CONVGATE_ASSIGN_OR_RETURN(BlobSpec blob, ReadResolved(head, what, fetched.commit));
  blob.file = file;
  fetched.etag = blob.etag;
  fetched.size = blob.size;
  fetched.path = cache.Snapshot(fetched.commit, file);
  std::error_code ec;
  if (!fs::is_regular_file(cache.Blob(blob.etag), ec)) {
    CONVGATE_RETURN_IF_ERROR(DownloadBlob(options, cache, blob));
    fetched.downloaded = true;
  }
  CONVGATE_RETURN_IF_ERROR(LinkSnapshot(cache, fetched.commit, file, blob.etag));
  CONVGATE_RETURN_IF_ERROR(WriteRef(cache, revision, fetched.commit));
  return fetched;
}

Result<std::vector<std::string>> CachedFiles(const HubOptions& options, const std::string& repo_id,
                                             const std::string& revision) {
  CONVGATE_RETURN_IF_ERROR(CheckRepoId(repo_id));
  CONVGATE_RETURN_IF_ERROR(CheckRevision(revision));
  const RepoCache cache(options.cache_dir, repo_id);
  const std::optional<std::string> commit = CachedCommit(cache, revision);
  const fs::path snapshot = commit ? cache.repo / "snapshots" / *commit : fs::path();
  std::error_code ec;
  if (!commit || !fs::is_directory(snapshot, ec)) {
    return Status::NotFound("HF_HUB_OFFLINE is set and the cache has no snapshot of " + repo_id +
                            " at " + revision + " (" + cache.repo.string() + ")");
  }
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(snapshot, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) files.push_back(it->path().lexically_relative(snapshot).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<bool> FileExists(const HubOptions& options, const std::string& repo_id,
                        const std::string& revision, const std::string& file) {
  CONVGATE_RETURN_IF_ERROR(CheckIds(repo_id, revision, file));
  if (options.offline) {
    return FindCached(RepoCache(options.cache_dir, repo_id), revision, file).has_value();
  }
  CONVGATE_ASSIGN_OR_RETURN(HttpResponse head, HeadResolve(options, repo_id, revision, file));
  if (Answered(head)) return true;
  const Status failure = HttpFailure(head, Describe(repo_id, revision, file),
                                     !options.token.empty(), options.retry.attempts);
  if (failure.code() == StatusCode::kNotFound) return false;
  return failure;
}

Result<RepoInfo> FetchRepoInfo(const HubOptions& options, const std::string& repo_id,
                               const std::string& revision) {
  CONVGATE_RETURN_IF_ERROR(CheckRepoId(repo_id));
  if (!revision.empty()) CONVGATE_RETURN_IF_ERROR(CheckRevision(revision));
  if (options.offline) {
    return Status::FailedPrecondition("HF_HUB_OFFLINE is set: the metadata of " + repo_id +
                                      " comes from the hub's API, which offline mode does not ask");
  }
  const HttpRequest request =
      HubRequest(options, ModelInfoUrl(options.endpoint, repo_id, revision));
  std::string body;
  const BodySink sink{
      .first =
          [&](const HttpResponse&) {
            body.clear();
            return Status::OK();
          },
      .write = [&](std::string_view chunk) -> Status {
        if (body.size() + chunk.size() > kMaxApiBytes) {
          return Status::DataLoss("the hub's answer for " + repo_id + " is over 64 MiB");
        }
        body.append(chunk);
        return Status::OK();
      }};
  const std::string what = "the metadata of " + repo_id;
  CONVGATE_ASSIGN_OR_RETURN(HttpResponse response, WithRetries(options.retry, "GET " + what, [&] {
                              return Perform(request, &sink);
                            }));
  if (!Answered(response) || response.status >= 300) {
    return HttpFailure(response, what, !options.token.empty(), options.retry.attempts);
  }
  return ParseRepoInfo(body, repo_id);
}

}  // namespace convgate::hub
