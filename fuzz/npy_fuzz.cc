// libFuzzer entry point for the .npy reader. Not part of the default build; build by hand, e.g.
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
//     fuzz/npy_fuzz.cc src/io/npy.cc src/io/py_literal.cc src/core/*.cc -lcrypto -o npy_fuzz
// Every input must give a tensor or a Status; a crash, leak or sanitizer report is a bug, and the
// input that caused it becomes a case in tests/io/npy_test.cc.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::Tensor> tensor = convgate::io::ParseNpy(bytes, "fuzz.npy");
  // A tensor that parsed must serialize and parse back to itself.
  if (tensor.ok()) {
    convgate::Result<convgate::Tensor> again =
        convgate::io::ParseNpy(convgate::io::SerializeNpy(*tensor), "again.npy");
    if (!again.ok() || !again->BitwiseEquals(*tensor)) __builtin_trap();
  }
  return 0;
}
