#include "hub/download.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "convgate/core/file_util.h"
#include "convgate/core/scoped_fd.h"
#include "convgate/core/utf8.h"
#include "hub/names.h"
#include "hub/retry.h"

namespace convgate::hub {
namespace {

std::string Errno(const fs::path& path) { return path.string() + ": " + std::strerror(errno); }

// A file convgate writes in the shared cache (a lock, a download in progress), opened without
// following a symlink and only when it is a regular file: a link planted there (to a victim's
// file) is never written through, a FIFO never blocks. -1 with errno otherwise (ELOOP: a link).
int OpenCacheFile(const fs::path& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  struct stat info;
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

std::string RefusedLink(const fs::path& path) {
  return errno == ELOOP || errno == EINVAL
             ? path.string() +
                   " is a symlink or not a regular file (refused: something else "
                   "put it in the shared cache)"
             : Errno(path);
}

// The blob's lock, as huggingface_hub's filelock takes it (flock on <etag>.lock), so the two tools
// never write one .incomplete file at the same time.
Result<std::unique_ptr<ScopedFd>> LockBlob(const fs::path& lock_path) {
  std::error_code ec;
  fs::create_directories(lock_path.parent_path(), ec);
  auto fd = std::make_unique<ScopedFd>(OpenCacheFile(lock_path, O_RDWR));
  if (fd->get() < 0) return Status::Unavailable("cannot open lock " + RefusedLink(lock_path));
  while (flock(fd->get(), LOCK_EX) != 0) {
    if (errno != EINTR) return Status::Unavailable("cannot lock " + Errno(lock_path));
  }
  return fd;
}

uint64_t FileSize(const fs::path& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

Status WriteAll(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return Status::Unavailable("cannot write " + Errno(path));
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return Status::OK();
}

// "bytes 100-199/200" -> 100.
std::optional<uint64_t> ContentRangeStart(const Headers& headers) {
  const auto found = headers.find("content-range");
  if (found == headers.end() || !found->second.starts_with("bytes ")) return std::nullopt;
  try {
    return std::stoull(found->second.substr(6));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// One GET of the blob into the .incomplete file, resuming from what it holds; transient failures
// retried. Returns the final response.
Result<HttpResponse> GetIntoIncomplete(const HubOptions& options, const RepoCache& cache,
                                       const BlobSpec& blob) {
  const fs::path incomplete = cache.Incomplete(blob.etag);
  return WithRetries(options.retry, "GET " + blob.file, [&]() -> Result<HttpResponse> {
    ScopedFd fd(OpenCacheFile(incomplete, O_WRONLY | O_APPEND));
    if (fd.get() < 0) return Status::Unavailable("cannot write " + RefusedLink(incomplete));
    uint64_t offset = FileSize(incomplete);
    if (offset >= blob.size) offset = 0;  // complete or too long already: start over
    if (offset == 0 && ftruncate(fd.get(), 0) != 0) {
      return Status::Unavailable("cannot truncate " + Errno(incomplete));
    }
    uint64_t written = offset;
    BodySink sink{.first = [&](const HttpResponse& head) -> Status {
                    // A 206 must continue where the file ends; anything else is the whole file.
                    if (head.status == 206 && ContentRangeStart(head.headers) == offset)
                      return Status::OK();
                    written = 0;
                    if (ftruncate(fd.get(), 0) != 0)
                      return Status::Unavailable("cannot truncate " + Errno(incomplete));
                    return Status::OK();
                  },
                  .write = [&](std::string_view chunk) -> Status {
                    written += chunk.size();
                    if (written > blob.size) {
                      return Status::DataLoss(blob.file + ": the hub sent more than the " +
                                              std::to_string(blob.size) + " bytes it announced");
                    }
                    return WriteAll(fd.get(), chunk, incomplete);
                  }};
    HttpRequest request{.url = blob.url,
                        .token = options.token,
                        .token_origin = UrlOrigin(options.endpoint),
                        .range_start = offset,
                        .stall_timeout_seconds = options.retry.stall_timeout_seconds,
                        .deadline = options.retry.deadline};
    return Perform(request, &sink);
  });
}

// The hash the etag promises, of the downloaded file: nullopt when the etag is no hash.
Result<std::optional<std::string>> ActualHash(const fs::path& path, const std::string& etag) {
  if (IsSha256(etag)) {
    CONVGATE_ASSIGN_OR_RETURN(std::string sha256, Sha256File(path));
    return std::optional<std::string>(sha256);
  }
  if (IsCommitHash(etag)) {
    CONVGATE_ASSIGN_OR_RETURN(std::string sha1, GitBlobSha1File(path));
    return std::optional<std::string>(sha1);
  }
  return std::optional<std::string>();
}

// OK, or DataLoss naming what does not match.
Status CheckDownload(const fs::path& path, const BlobSpec& blob) {
  const uint64_t size = FileSize(path);
  if (size != blob.size) {
    return Status::DataLoss(blob.file + ": downloaded " + std::to_string(size) +
                            " bytes, the hub announced " + std::to_string(blob.size));
  }
  CONVGATE_ASSIGN_OR_RETURN(std::optional<std::string> actual, ActualHash(path, blob.etag));
  if (actual && *actual != blob.etag) {
    return Status::DataLoss(blob.file + ": " + (IsSha256(blob.etag) ? "sha256" : "git blob sha1") +
                            " mismatch: expected " + blob.etag + ", got " + *actual);
  }
  return Status::OK();
}

// One download from wherever the .incomplete file is, then the check. DataLoss: the bytes are
// wrong (the caller may try again from zero).
Status DownloadAndCheck(const HubOptions& options, const RepoCache& cache, const BlobSpec& blob) {
  CONVGATE_ASSIGN_OR_RETURN(HttpResponse response, GetIntoIncomplete(options, cache, blob));
  const bool done = response.transport == TransportError::kNone &&
                    ((response.status >= 200 && response.status < 300) || response.status == 416);
  if (!done) {
    return HttpFailure(response, blob.file, !options.token.empty(), options.retry.attempts);
  }
  return CheckDownload(cache.Incomplete(blob.etag), blob);
}

}  // namespace

Status HttpFailure(const HttpResponse& response, const std::string& what, bool sent_token,
                   int attempts) {
  if (response.transport != TransportError::kNone) {
    // What to try next when the hub stays out of reach: the cache, or another endpoint.
    return Status::Unavailable(what + ": " + DescribeFailure(response) + " (" +
                               std::to_string(attempts) +
                               " attempts; HF_HUB_OFFLINE=1 serves files already in the cache, "
                               "HF_ENDPOINT names a mirror)");
  }
  const auto error_code = response.headers.find("x-error-code");
  // A header is the server's text: shown escaped, so ESC or \r in it cannot drive the terminal.
  const std::string hub_code =
      error_code == response.headers.end() ? "" : EscapeForDisplay(error_code->second);
  const std::string http = "HTTP " + std::to_string(response.status);
  if (response.status == 401 || response.status == 403) {
    const std::string why =
        sent_token ? "the token was refused or has no access to it"
                   : "a private or gated repository needs a token: --token, HF_TOKEN or the file "
                     "`huggingface-cli login` writes";
    if (hub_code == "RepoNotFound") {
      return Status::NotFound(what + ": repository not found (" + http + "; " + why + ")");
    }
    return Status::FailedPrecondition(what + ": " + http + " unauthorized (" + why + ")");
  }
  if (response.status == 404) {
    return Status::NotFound(what + ": not found (" + http +
                            (hub_code.empty() ? "" : ", " + hub_code) + ")");
  }
  if (response.status == 429 || response.status >= 500) {
    return Status::Unavailable(what + ": " + http + " (" + std::to_string(attempts) + " attempts)");
  }
  return Status::Unavailable(what + ": unexpected " + http);
}

Result<std::string> GitBlobSha1File(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Unavailable("cannot read " + Errno(path));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha1(), nullptr) != 1) {
    return Status::Internal("OpenSSL: cannot start a sha1");
  }
  const std::string header = "blob " + std::to_string(FileSize(path)) + std::string(1, '\0');
  EVP_DigestUpdate(ctx.get(), header.data(), header.size());
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx.get(), buffer, static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int byte_idx = 0; byte_idx < length; ++byte_idx) {
    hex += kHex[digest[byte_idx] >> 4];
    hex += kHex[digest[byte_idx] & 15];
  }
  return hex;
}

Status DownloadBlob(const HubOptions& options, const RepoCache& cache, const BlobSpec& blob) {
  std::error_code ec;
  fs::create_directories(cache.Blob(blob.etag).parent_path(), ec);
  if (ec)
    return Status::Unavailable("cannot create " + cache.repo.string() + "/blobs: " + ec.message());
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<ScopedFd> lock, LockBlob(cache.Lock(blob.etag)));
  // Another process may have finished it while this one waited for the lock.
  if (fs::is_regular_file(cache.Blob(blob.etag), ec) &&
      FileSize(cache.Blob(blob.etag)) == blob.size) {
    return Status::OK();
  }
  const fs::path incomplete = cache.Incomplete(blob.etag);
  for (int round = 0;; ++round) {
    Status status = DownloadAndCheck(options, cache, blob);
    if (status.ok()) break;
    fs::remove(incomplete, ec);
    if (status.code() != StatusCode::kDataLoss || round > 0) {
      return round > 0 ? status.WithContext("downloaded twice") : status;
    }
    std::fprintf(stderr, "convgate: %s; downloading it again from zero\n",
                 status.message().c_str());
  }
  if (rename(incomplete.c_str(), cache.Blob(blob.etag).c_str()) != 0) {
    const Status status = Status::Unavailable("cannot rename " + Errno(incomplete));
    fs::remove(incomplete, ec);
    return status;
  }
  return Status::OK();
}

}  // namespace convgate::hub
