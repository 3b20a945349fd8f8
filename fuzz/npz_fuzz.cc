// Fuzz target for the .npz reader (libzip, then the .npy reader on every member), whole archives.
// Both entry points: ReadNpz (a file, what the commands use) and ParseNpz (bytes in memory); they
// must agree. npz_directory_fuzz.cc aims the mutations at the zip directory instead.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/io/npz.h"
#include "memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::TensorMap> parsed = convgate::io::ParseNpz(bytes, "fuzz.npz");
  const convgate::fuzz::MemoryFile file(bytes);
  convgate::Result<convgate::TensorMap> read = convgate::io::ReadNpz(file.path());
  if (parsed.ok() != read.ok()) __builtin_trap();
  if (parsed.ok()) {
    if (parsed->size() != read->size()) __builtin_trap();
    for (size_t member_idx = 0; member_idx < parsed->size(); ++member_idx) {
      if ((*parsed)[member_idx].name != (*read)[member_idx].name ||
          !(*parsed)[member_idx].tensor.BitwiseEquals((*read)[member_idx].tensor)) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
