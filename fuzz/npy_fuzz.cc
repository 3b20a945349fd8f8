// Fuzz target for the .npy reader (fuzz/CMakeLists.txt builds it; README "Building and testing").
// Every input must give a tensor or a Status; a crash, leak or sanitizer report is a bug, and the
// input that caused it goes to fuzz/regressions/npy/ and becomes a case in tests/io/npy_test.cc.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "convgate/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::Tensor> tensor = convgate::io::ParseNpy(bytes, "fuzz.npy");
  // A tensor that parsed must serialize and parse back to itself. The one exception: bytes ('|S')
  // that are not UTF-8, which the writer's '<U' str arrays cannot hold and refuse to write.
  if (tensor.ok()) {
    convgate::Result<std::string> npy = convgate::io::SerializeNpy(*tensor);
    if (!npy.ok()) {
      const bool non_utf8_strings = tensor->dtype() == convgate::DType::kString &&
                                    npy.status().code() == convgate::StatusCode::kInvalidArgument;
      if (!non_utf8_strings) __builtin_trap();
      return 0;
    }
    convgate::Result<convgate::Tensor> again = convgate::io::ParseNpy(*npy, "again.npy");
    if (!again.ok() || !again->BitwiseEquals(*tensor)) __builtin_trap();
  }
  return 0;
}
