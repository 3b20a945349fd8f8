// Models by id: files of Hugging Face Hub repositories, fetched over the Hub's public HTTP API into
// a cache laid out exactly as huggingface_hub lays out its own, so either tool reuses what the
// other downloaded.
//
// Settings (HubOptionsFromEnvironment), the same names huggingface_hub reads:
//   HF_ENDPOINT      the hub; default https://huggingface.co
//   HF_TOKEN         the token, unless --token gives one; else the file HF_TOKEN_PATH, default
//                    HF_HOME/token (what `huggingface-cli login` writes)
//   HF_HUB_CACHE     the cache; default HF_HOME/hub, HF_HOME defaulting to ~/.cache/huggingface
//   HF_HUB_OFFLINE   1/true/yes/on: answer from the cache only, never a request
// and convgate's own retry bounds (RetryPolicy below):
//   CONVGATE_HUB_ATTEMPTS, CONVGATE_HUB_BACKOFF_BASE, CONVGATE_HUB_BACKOFF_MAX,
//   CONVGATE_HUB_RETRY_AFTER_MAX, CONVGATE_HUB_STALL_TIMEOUT (seconds).
//
// The token is sent only to the endpoint's host (never on a redirect to another host), and never
// appears in a message, a log line or a file.
//
// Thread safety: the functions are reentrant; concurrent downloads of one blob (by convgate or
// huggingface_hub) serialize on the lock file huggingface_hub uses (.locks/<repo>/<etag>.lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::hub {

// "name" or "org/name": letters, digits, '-', '_', '.'; no "--" or ".." (huggingface_hub's
// validate_repo_id rules, which keep the cache folder name models--org--name unambiguous); at most
// 96 characters.
Status CheckRepoId(std::string_view repo_id);
// A branch, tag or commit: non-empty, no "..", no NUL or control characters, no leading '/'.
Status CheckRevision(std::string_view revision);
// A relative path with '/' separators: no empty, "." or ".." component, no backslash or control
// characters.
Status CheckRepoFile(std::string_view file);

// How transient failures (connection errors, timeouts, 429, 5xx) are retried: attempt n (from 0)
// waits a uniformly random time in [0, min(backoff_max, backoff_base * 2^n)] ("full jitter",
// AWS's "Exponential Backoff And Jitter"), or the Retry-After the server sent.
struct RetryPolicy {
  // Tries per request, the first included. 5: a hub that fails 5 times in a row, over ~15 s of
  // waits at the defaults below, is down rather than flaky.
  int attempts = 5;
  double backoff_base_seconds = 1.0;
  // 30 s: long enough for a CDN node to come back, short enough that a user still waits.
  double backoff_max_seconds = 30.0;
  // A Retry-After above this fails the request at once, naming the wait the server asked for,
  // instead of sleeping for it (a hub asking for an hour is not flaky).
  double retry_after_max_seconds = 120.0;
  // A transfer that receives no byte for this long is dropped and retried (checked about once a
  // second); also the connect timeout.
  double stall_timeout_seconds = 30.0;
  // When the whole fetch must have ended, every request and retry included: a transfer still
  // running then is cut off and no retry starts after it (Unavailable, "... deadline ..."). A
  // slow hub that keeps above the minimum rate would otherwise hold a fetch for hours. max():
  // none. `fetch --timeout` sets it, and a batch sets it to each entry's timeout for the fetches
  // of its preflight.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // no trailing '/'
  std::string token;                                // empty: none
  std::filesystem::path cache_dir;                  // the hub cache (HF_HUB_CACHE)
  bool offline = false;
  RetryPolicy retry;
};

// The options from the environment (see the header comment); `token_flag` (--token) wins over
// HF_TOKEN and the token file. InvalidArgument naming the variable for a malformed value.
Result<HubOptions> HubOptionsFromEnvironment(const std::string& token_flag);

// A repository file as the cache holds it.
struct FetchedFile {
  std::string file;            // the path inside the repository
  std::string commit;          // the commit it was resolved at (40 hex)
  std::string etag;            // the blob's name: sha256 for LFS files, else the git sha1
  uint64_t size = 0;           // bytes
  std::filesystem::path path;  // snapshots/<commit>/<file> (a symlink into blobs)
  bool downloaded = false;     // false: it was in the cache already
  bool requested = false;      // false: answered without any request
};

// The file `file` of `repo_id` at `revision` (a branch, tag or commit), downloaded unless the
// cache has it. Errors: InvalidArgument for a malformed id, file or revision; NotFound for a
// repository or file the hub does not have (or, offline, the cache does not have: the message
// says so); PermissionDenied-like failures (401/403) as FailedPrecondition naming what the token
// has to do with it; DataLoss when the download does not match its size or sha256 twice in a row
// (naming the file, the expected and the actual hash); Unavailable when the hub cannot be reached
// after the retries.
Result<FetchedFile> FetchFile(const HubOptions& options, const std::string& repo_id,
                              const std::string& revision, const std::string& file);

// Whether `file` exists in `repo_id` at `revision`: one HEAD request, nothing downloaded (offline:
// whether the cache has it). Errors as FetchFile for anything but "not found".
Result<bool> FileExists(const HubOptions& options, const std::string& repo_id,
                        const std::string& revision, const std::string& file);

struct RepoFile {
  std::string file;
  std::optional<uint64_t> size;  // when the hub said
};

// The files the cache holds of `repo_id` at `revision` (the snapshot of the commit its ref names),
// sorted; what `fetch REPO` offers offline. NotFound, saying HF_HUB_OFFLINE, when there is none.
Result<std::vector<std::string>> CachedFiles(const HubOptions& options, const std::string& repo_id,
                                             const std::string& revision);

// What /api/models/{repo}[/revision/{rev}] says about a repository.
struct RepoInfo {
  std::string repo_id;
  std::string commit;  // "sha"
  std::string model_type;
  std::vector<std::string> architectures;
  std::string pipeline_tag;
  std::string license;
  std::vector<RepoFile> files;
};

// One GET of the model's API page (never served from the cache: offline is FailedPrecondition).
Result<RepoInfo> FetchRepoInfo(const HubOptions& options, const std::string& repo_id,
                               const std::string& revision);

// A model named by id: hf://org/name[@revision]/path/in/repo (a revision containing '/' is
// written with %2F: hf://org/name@refs%2Fpr%2F1/model.onnx). A repository without an org names
// its revision, which ends the id: hf://bert-base-uncased@main/model.onnx.
struct HfUri {
  std::string repo_id;
  std::string revision = "main";
  std::string file;
};

// True when `text` starts with "hf://".
bool IsHfUri(std::string_view text);
// InvalidArgument quoting the text and the expected form for anything malformed (the id, the
// revision and the file checked as CheckRepoId / CheckRevision / CheckRepoFile).
Result<HfUri> ParseHfUri(std::string_view text);

// hf://org/name[@revision] (or hf://name[@revision]) naming a whole repository: the id and the
// revision, `file` empty. InvalidArgument as ParseHfUri, and for a URI that names a file.
Result<HfUri> ParseHfRepoUri(std::string_view text);
// A bare Hub id as OpenVINO's verify-conversion document writes a SOURCE, "org/name": one '/',
// an id CheckRepoId accepts, no scheme, and no model or data file's extension (.onnx, .json, ...:
// "models/missing.onnx" is a path). Whether it is also a local path is the caller's question.
bool LooksLikeHubId(std::string_view text);

// The URI again, the revision's '/' as %2F: FormatHfUri(*ParseHfUri(t)) == t for any valid t
// that spells its revision (hf://org/name@main/m.onnx).
std::string FormatHfUri(const HfUri& uri);

// Where a model file of the hub came from, as results record it (report.json, summary.json, the
// store): the reference pipeline's "source of the model file".
struct ModelOrigin {
  std::string uri;  // as the user wrote it
  std::string repo_id;
  std::string revision;  // as requested ("main", a tag, a commit)
  std::string commit;    // what it resolved to (40 hex)
  std::string file;      // the path inside the repository
  std::string etag;      // the blob's name: sha256 for LFS files, else the git sha1
  uint64_t size = 0;
  std::string how;  // "downloaded" (now), "cache" (no download), "converted"
  // How == "converted": the repository files the conversion read (at `commit`), and by what.
  std::vector<std::string> converted_from;
  std::string converter;
  std::string converter_version;
  bool conversion_cache_hit = false;  // converted earlier: taken from the conversion cache
  // The export's task and what decided it: "feature-extraction (declared model type bert, no
  // architecture in config.json: the type's task)". Empty when not converted.
  std::string conversion_task;

  // hf://repo@commit/file: the same bytes again, answered from the cache without a request.
  std::string PinnedUri() const;
};

ModelOrigin OriginOf(const HfUri& uri, const FetchedFile& fetched);

}  // namespace convgate::hub
