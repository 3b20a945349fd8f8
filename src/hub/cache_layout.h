// huggingface_hub's cache layout, which convgate shares:
//   <cache>/models--{org}--{name}/blobs/<etag>                 the file's bytes
//                                  /blobs/<etag>.incomplete      a download in progress
//                                  /snapshots/<commit>/<file>    a relative symlink into blobs
//                                  /refs/<revision>              the commit a branch or tag was at
//   <cache>/.locks/models--{org}--{name}/<etag>.lock             held while a blob downloads
// REQUIRES for every function: ids, revisions and files passed CheckRepoId / CheckRevision /
// CheckRepoFile (names.h), commits IsCommitHash, so no path leaves the cache.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "convgate/core/status.h"

namespace convgate::hub {

namespace fs = std::filesystem;

// models--{org}--{name}
std::string RepoFolderName(const std::string& repo_id);

struct RepoCache {
  fs::path cache;  // the hub cache
  fs::path repo;   // <cache>/models--{org}--{name}

  RepoCache(fs::path cache_dir, const std::string& repo_id);
  fs::path Blob(const std::string& etag) const { return repo / "blobs" / etag; }
  fs::path Incomplete(const std::string& etag) const {
    return repo / "blobs" / (etag + ".incomplete");
  }
  fs::path Snapshot(const std::string& commit, const std::string& file) const {
    return repo / "snapshots" / commit / file;
  }
  fs::path Ref(const std::string& revision) const { return repo / "refs" / revision; }
  fs::path Lock(const std::string& etag) const;
};

// The commit `revision` names in the cache: itself when it is a commit hash, else refs/<revision>
// when that holds one. nullopt otherwise.
std::optional<std::string> CachedCommit(const RepoCache& cache, const std::string& revision);

// The snapshot file of `file` at `revision` when the cache has it (the symlink resolves to an
// existing file), with its commit.
struct CachedFile {
  std::string commit;
  fs::path path;
};
std::optional<CachedFile> FindCached(const RepoCache& cache, const std::string& revision,
                                     const std::string& file);

// refs/<revision> := commit (written atomically, no newline, as huggingface_hub writes it).
// Nothing is written when revision is the commit itself.
Status WriteRef(const RepoCache& cache, const std::string& revision, const std::string& commit);

// snapshots/<commit>/<file> -> ../../blobs/<etag> (one more "../" per folder in `file`), replacing
// whatever was there atomically.
Status LinkSnapshot(const RepoCache& cache, const std::string& commit, const std::string& file,
                    const std::string& etag);

}  // namespace convgate::hub
