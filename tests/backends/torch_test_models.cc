#include "backends/torch_test_models.h"

#include <torch/script.h>

namespace convgate::testing {

std::string WriteTorchScript(const std::filesystem::path& path, const std::string& source) {
  try {
    torch::jit::Module module("TestModel");
    module.define(source);
    module.save(path.string());
    return "";
  } catch (const c10::Error& error) {
    return error.what_without_backtrace();
  }
}

}  // namespace convgate::testing
