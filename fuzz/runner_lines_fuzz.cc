// Fuzz target for the runner protocol (backends/runner/runner_protocol.cc): the JSON lines a
// runtime's runner process (the openvino runner, an exec runner) writes back. A runner is another
// program, so every line is untrusted: each line of the input is read as the hello and as a
// response.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "backends/runner/runner_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (true) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    (void)convgate::backends::ParseRunnerHello(line);
    (void)convgate::backends::ParseRunnerResponse(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}
