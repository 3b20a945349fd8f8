#include "hub/cache_layout.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "convgate/core/file_util.h"
#include "hub/names.h"

namespace convgate::hub {

std::string RepoFolderName(const std::string& repo_id) {
  std::string name = "models--";
  for (char c : repo_id) {
    if (c == '/') {
      name += "--";
    } else {
      name += c;
    }
  }
  return name;
}

RepoCache::RepoCache(fs::path cache_dir, const std::string& repo_id)
    : cache(std::move(cache_dir)), repo(cache / RepoFolderName(repo_id)) {}

fs::path RepoCache::Lock(const std::string& etag) const {
  return cache / ".locks" / repo.filename() / (etag + ".lock");
}

std::optional<std::string> CachedCommit(const RepoCache& cache, const std::string& revision) {
  if (IsCommitHash(revision)) return revision;
  // A ref is one line: a FIFO or a device planted there is not read (it would hang or fill memory).
  Result<std::string> text = ReadFile(cache.Ref(revision), 4096, "a ref is one line");
  if (!text.ok()) return std::nullopt;
  std::string commit = text->substr(0, text->find('\n'));
  while (!commit.empty() && (commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
  if (!IsCommitHash(commit)) return std::nullopt;
  return commit;
}

std::optional<CachedFile> FindCached(const RepoCache& cache, const std::string& revision,
                                     const std::string& file) {
  const std::optional<std::string> commit = CachedCommit(cache, revision);
  if (!commit) return std::nullopt;
  const fs::path path = cache.Snapshot(*commit, file);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;  // follows the symlink
  return CachedFile{*commit, path};
}

Status WriteRef(const RepoCache& cache, const std::string& revision, const std::string& commit) {
  if (revision == commit) return Status::OK();
  const fs::path path = cache.Ref(revision);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    return Status::Unavailable("cannot create " + path.parent_path().string() + ": " +
                               ec.message());
  return WriteFileAtomic(path, commit);
}

Status LinkSnapshot(const RepoCache& cache, const std::string& commit, const std::string& file,
                    const std::string& etag) {
  const fs::path link = cache.Snapshot(commit, file);
  std::error_code ec;
  fs::create_directories(link.parent_path(), ec);
  if (ec) {
    return Status::Unavailable("cannot create " + link.parent_path().string() + ": " +
                               ec.message());
  }
  // From snapshots/<commit>/[folders/] up to the repository folder, then into blobs.
  std::string target = "../../";
  for (char c : file) {
    if (c == '/') target += "../";
  }
  target += "blobs/" + etag;
  // A symlink under a temporary name renamed over the old one: readers see the old or the new
  // link, never none.
  const fs::path temp = link.string() + ".convgate-" + std::to_string(getpid());
  fs::remove(temp, ec);
  if (symlink(target.c_str(), temp.c_str()) != 0 || rename(temp.c_str(), link.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    fs::remove(temp, ec);
    return Status::Unavailable("cannot link " + link.string() + " -> " + target + ": " + error);
  }
  return Status::OK();
}

}  // namespace convgate::hub
