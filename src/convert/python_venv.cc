#include "convert/python_venv.h"

#include <cstdlib>

namespace convgate::convert {
namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

}  // namespace

std::filesystem::path PythonVenvDir() {
  const std::string home = EnvOr("HOME", "/root");
  const std::string deps = EnvOr("CONVGATE_DEPS", home + "/.cache/convgate-deps");
  return EnvOr("CONVGATE_VENV", deps + "/venv");
}

Result<std::filesystem::path> PythonVenvProgram(const std::string& program) {
  const std::filesystem::path venv = PythonVenvDir();
  const std::filesystem::path path = venv / "bin" / program;
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) return path;
  return Status::NotFound("the Python environment " + venv.string() + " has no bin/" + program +
                          " (scripts/setup.sh creates it from scripts/python-requirements.txt; "
                          "CONVGATE_VENV names another)");
}

}  // namespace convgate::convert
