// libFuzzer entry point for the .npz reader (libzip over an in-memory buffer). Not part of the
// default build; build by hand, e.g.
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
//     fuzz/npz_fuzz.cc src/io/npz.cc src/io/npy.cc src/io/npy_strings.cc src/io/py_literal.cc \
//     src/core/*.cc \
//     $(pkg-config --cflags --libs libzip) -lcrypto -o npz_fuzz
// Seed it with archives from np.savez / np.savez_compressed (tests/io/numpy_interop.py write DIR).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/io/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::TensorMap> tensors = convgate::io::ParseNpz(bytes, "fuzz.npz");
  (void)tensors;
  return 0;
}
