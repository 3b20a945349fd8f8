// Highway's run-time dispatch needs two functions from libhwy: the CPU's targets and the chosen
// one. Debian's libhwy 1.0.3 also runs a static initializer when it is loaded that measures the
// timer's resolution (hwy::platform::TimerResolution, for its nanobenchmark) by spinning: about
// 2 ms, a fifth of `convgate --version`, paid by every process whether it compares anything or
// not. So convgate does not link libhwy: these two definitions stand in for it and load it with
// dlopen on the first dispatch (the first comparison), then call its own functions. Abort, which
// Highway's debug assertions call (Debug builds only), is defined here too. Everything else of
// Highway used here is in its headers.
#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "hwy/targets.h"

namespace hwy {
namespace {

constexpr const char* kLibrary = "libhwy.so.1";

// libhwy's definition of `symbol` (mangled). A missing or broken libhwy is an installation
// problem (scripts/setup.sh installs it): the message names the library and dlerror, and the
// process exits 3 (could not run) rather than comparing without its SIMD kernels.
void* Resolve(const char* symbol) {
  static void* const library = [] {
    void* handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "convgate: cannot load %s (Highway, for the comparison kernels): %s\n",
                   kLibrary, ::dlerror());
      std::exit(3);
    }
    return handle;
  }();
  void* function = ::dlsym(library, symbol);
  if (function == nullptr) {
    std::fprintf(stderr, "convgate: %s has no %s: %s\n", kLibrary, symbol, ::dlerror());
    std::exit(3);
  }
  return function;
}

}  // namespace

int64_t SupportedTargets() {
  static const auto supported =
      reinterpret_cast<int64_t (*)()>(Resolve("_ZN3hwy16SupportedTargetsEv"));
  return supported();
}

ChosenTarget& GetChosenTarget() {
  // The object lives in libhwy, so SetSupportedTargetsForTest (tests) and the dispatch here see
  // the same one.
  static ChosenTarget& chosen =
      reinterpret_cast<ChosenTarget& (*)()>(Resolve("_ZN3hwy15GetChosenTargetEv"))();
  return chosen;
}

void Abort(const char* file, int line, const char* format, ...) {
  std::fprintf(stderr, "convgate: Highway assertion failed at %s:%d: ", file, line);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::abort();
}

}  // namespace hwy
