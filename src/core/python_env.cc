#include "convgate/core/python_env.h"

#include <unistd.h>

#include <cstdlib>

namespace convgate {
namespace {

namespace fs = std::filesystem;

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

}  // namespace

fs::path VenvFolder() {
  if (const char* venv = NonEmptyEnv("CONVGATE_VENV")) return venv;
  if (const char* deps = NonEmptyEnv("CONVGATE_DEPS")) return fs::path(deps) / "venv";
  const char* home = NonEmptyEnv("HOME");
  return fs::path(home != nullptr ? home : "/") / ".cache" / "convgate-deps" / "venv";
}

Result<fs::path> VenvPython() {
  const fs::path folder = VenvFolder();
  const fs::path python = folder / "bin" / "python";
  std::error_code error;
  if (fs::is_regular_file(python, error) && ::access(python.c_str(), X_OK) == 0) return python;
  const bool from_env = NonEmptyEnv("CONVGATE_VENV") != nullptr;
  return Status::NotFound(
      "no Python virtual environment at " + folder.string() + " (" +
      (from_env ? "CONVGATE_VENV" : "the default; set CONVGATE_VENV to move it") +
      "): run ./scripts/setup.sh to create it");
}

}  // namespace convgate
