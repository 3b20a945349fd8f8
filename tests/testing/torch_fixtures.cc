#include "testing/torch_fixtures.h"

#include <filesystem>

#include "testing/subprocess.h"

namespace convgate::testing {

std::string TorchFixtureFolder(std::string& error) {
  const std::filesystem::path script =
      std::filesystem::path(CONVGATE_SOURCE_DIR) / "scripts/make_torch_fixtures.sh";
  ProcessResult r = RunProcess({script.string()});
  if (r.exit_code != 0) {
    error = "scripts/make_torch_fixtures.sh failed with exit " + std::to_string(r.exit_code) +
            "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
    return "";
  }
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.find_last_of('\n') + 1);
}

}  // namespace convgate::testing
