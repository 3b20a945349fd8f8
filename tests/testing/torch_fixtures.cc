#include "testing/torch_fixtures.h"

#include <cstdlib>
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

std::string SubgraphFixtureFolder(std::string& error) {
  return FolderFromScript("make_subgraph_fixtures.py", error);
}

std::string VenvPython() {
  const char* venv = std::getenv("CONVGATE_VENV");
  if (venv != nullptr && venv[0] != '\0') return std::string(venv) + "/bin/python";
  const char* deps = std::getenv("CONVGATE_DEPS");
  const std::string root = deps != nullptr && deps[0] != '\0'
                               ? std::string(deps)
                               : std::string(std::getenv("HOME")) + "/.cache/convgate-deps";
  return root + "/venv/bin/python";
}

std::string TfFixtureFolder(std::string& error) {
  return FolderFromScript("make_tf_fixtures.sh", error);
}

std::string PipelineFixtureFolder(std::string& error) {
  return FolderFromScript("make_pipeline_fixtures.sh", error);
}

}  // namespace convgate::testing
