#include "testing/torch_fixtures.h"

#include <filesystem>

#include "testing/subprocess.h"

namespace convgate::testing {

namespace {

// Runs scripts/NAME and returns the last line it printed (the folder), or "" with `error` set.
std::string FolderFromScript(const std::string& name, std::string& error) {
  const std::filesystem::path script =
      std::filesystem::path(CONVGATE_SOURCE_DIR) / "scripts" / name;
  ProcessResult r = RunProcess({script.string()});
  if (r.exit_code != 0) {
    error = "scripts/" + name + " failed with exit " + std::to_string(r.exit_code) + "\nstdout:\n" +
            r.out + "\nstderr:\n" + r.err;
    return "";
  }
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.find_last_of('\n') + 1);
}

}  // namespace

std::string TorchFixtureFolder(std::string& error) {
  return FolderFromScript("make_torch_fixtures.sh", error);
}

std::string HfZooFolder(std::string& error) { return FolderFromScript("make_hf_zoo.sh", error); }

std::string PipelineFixtureFolder(std::string& error) {
  return FolderFromScript("make_pipeline_fixtures.sh", error);
}

}  // namespace convgate::testing
