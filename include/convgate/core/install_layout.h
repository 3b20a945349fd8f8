// Where convgate's own files are: the Python programs it runs (runtime/ in the source tree,
// share/convgate/runtime in an installed prefix) and the folder of the code that is running.
// One resolver, so an installed convgate and a build tree find the same files the same way.
#pragma once

#include <filesystem>
#include <string_view>

namespace convgate {

// The folder of the file holding convgate's code in this process: the convgate binary, or
// libconvgate.so in a program that links the library (dladdr on a function of this file).
// Empty when the loader cannot say.
std::filesystem::path CodeFolder();

// The runtime Python program `name` ("hf_runner.py"): $override_variable when it is set and not
// empty (nullptr: none), else PREFIX/share/convgate/runtime/name when that file exists, PREFIX
// being CodeFolder()/.. or CodeFolder()/../.. (an installed prefix: bin/, lib/ or lib/convgate/),
// else the source tree's runtime/name (a build tree). The path may not exist; callers say which
// variable overrides it.
std::filesystem::path RuntimeScript(std::string_view name, const char* override_variable);

}  // namespace convgate
