// Fuzz target for the hub's JSON answers (hub/repo_info.cc): a repository's commit and file list,
// from a server convgate does not control. Every file name it accepts must be one the cache can
// hold safely (CheckRepoFile), since it becomes a path under the cache.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "convgate/hub/hub.h"
#include "hub/repo_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::hub::RepoInfo> info = convgate::hub::ParseRepoInfo(text, "org/model");
  if (!info.ok()) return 0;
  for (const auto& file : info->files) {
    if (!convgate::hub::CheckRepoFile(file.file).ok()) std::abort();
  }
  return 0;
}
