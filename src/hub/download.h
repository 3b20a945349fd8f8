// One blob of the cache downloaded: into blobs/<etag>.incomplete, resumed with Range after a
// connection breaks off, checked against its size and hash, then renamed to blobs/<etag>.
#pragma once

#include <cstdint>
#include <string>

#include "convgate/hub/hub.h"
#include "hub/cache_layout.h"
#include "hub/http.h"

namespace convgate::hub {

struct BlobSpec {
  std::string file;  // the repository path, for messages
  std::string url;   // where the bytes are (the resolve URL or the CDN URL it redirected to)
  std::string etag;  // the blob's name: a sha256 (LFS) or a git blob sha1
  uint64_t size = 0;
};

// Downloads `blob` unless blobs/<etag> already holds it, under the blob's lock. The hash checked
// is the etag: a 64-hex etag is the file's sha256 (LFS), a 40-hex one its git blob sha1
// (sha1 of "blob <size>\0" + bytes); other etags are checked by size only. A mismatch deletes the
// download and starts once more from zero; a second mismatch is DataLoss naming the file, the
// expected and the actual hash. On any failure nothing of the download is left in the cache.
Status DownloadBlob(const HubOptions& options, const RepoCache& cache, const BlobSpec& blob);

// The Status for a final non-2xx response or transport failure of `what` ("model.onnx of org/m").
Status HttpFailure(const HttpResponse& response, const std::string& what, bool sent_token,
                   int attempts);

// Lower-case hex git blob sha1 of a file (what the hub's ETag is for a file not in LFS).
Result<std::string> GitBlobSha1File(const fs::path& path);

}  // namespace convgate::hub
