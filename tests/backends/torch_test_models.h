// TorchScript models for the torch backend's tests, compiled from TorchScript source by libtorch
// itself (torch::jit::Module::define), so the tests need no Python. The only test file that
// includes libtorch's headers (each such TU costs ~15-20 s to compile); built only with
// CONVGATE_WITH_TORCH.
#pragma once

#include <filesystem>
#include <string>

namespace convgate::testing {

// Saves a module whose methods are `source` (TorchScript, e.g. "def forward(self, x):\n
// return x * 2\n") as a TorchScript archive at `path`, as torch.jit.save would. Returns an empty
// string, or libtorch's error (a syntax error in `source`).
std::string WriteTorchScript(const std::filesystem::path& path, const std::string& source);

}  // namespace convgate::testing
