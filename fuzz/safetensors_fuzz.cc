// Fuzz target for the safetensors reader (fuzz/CMakeLists.txt builds it; README "Building and
// testing"). Every input must give tensors or a Status; a crash, leak or sanitizer report is a
// bug, and the input that caused it goes to fuzz/regressions/safetensors/ and becomes a case in
// tests/io/safetensors_test.cc.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Limits limits;
  limits.max_tensor_bytes = int64_t{64} << 20;  // no fuzz input needs more
  convgate::Result<convgate::io::SafetensorsFile> file =
      convgate::io::ParseSafetensors(bytes, "fuzz.safetensors", limits);
  // What parsed must serialize and parse back to the same tensors.
  if (file.ok()) {
    convgate::Result<std::string> again =
        convgate::io::SerializeSafetensors(file->tensors, file->metadata);
    if (!again.ok()) __builtin_trap();
    convgate::Result<convgate::io::SafetensorsFile> back =
        convgate::io::ParseSafetensors(*again, "again.safetensors", limits);
    if (!back.ok() || back->tensors.size() != file->tensors.size()) __builtin_trap();
    for (const auto& entry : file->tensors) {
      const convgate::Tensor* other = back->tensors.Find(entry.name);
      if (other == nullptr || !other->BitwiseEquals(entry.tensor)) __builtin_trap();
    }
  }
  return 0;
}
