// What the Python-backed conversions ask of an interpreter before they run it.
#include <algorithm>

#include "convert/converter.h"
#include "convgate/core/file_util.h"
#include "convgate/core/subprocess.h"

namespace convgate::convert {
namespace {

// Reading a few package versions takes ~0.1 s; the limit only guards against a hung interpreter.
constexpr double kVersionProbeSeconds = 60.0;

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

Result<std::string> PythonPackageVersions(const std::string& python,
                                          const std::vector<std::string>& packages) {
  std::string probe = "import importlib.metadata as m\n";
  for (const std::string& package : packages) {
    probe += "print('" + package + " ' + m.version('" + package + "'))\n";
  }
  SubprocessOptions options;
  options.timeout_seconds = kVersionProbeSeconds;
  Result<SubprocessResult> run = RunSubprocess({python, "-c", probe}, options);
  if (!run.ok()) return Status::NotFound(run.status().message());
  if (!run->succeeded()) {
    return Status::NotFound("the Python environment of " + python + " lacks a package (run " +
                            "scripts/setup.sh): " + TailLines(run->stderr_tail, 1));
  }
  std::string versions = TailLines(run->stdout_tail, packages.size());
  std::replace(versions.begin(), versions.end(), '\n', ',');
  size_t pos = 0;
  while ((pos = versions.find(',', pos)) != std::string::npos) versions.insert(++pos, " ");
  return versions;
}

bool IsExportedProgramFile(const std::filesystem::path& source) {
  return Lower(source.extension().string()) == ".pt2";
}

}  // namespace convgate::convert
