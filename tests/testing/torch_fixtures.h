// The torchvision fixture folder (scripts/make_torch_fixtures.sh), for tests labelled torch.
#pragma once

#include <string>

namespace convgate::testing {

// Runs the fixture script (a cache hit after CTest's torch_fixtures setup test: ~0.1 s) and
// returns the folder it prints on its last line. On failure returns "" and sets `error` to the
// script's exit code and output.
std::string TorchFixtureFolder(std::string& error);

}  // namespace convgate::testing
