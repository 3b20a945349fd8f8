// Fuzz target for batch manifests (batch/manifest.cc): YAML, JSON and plain lists of model paths,
// told apart by the file's extension. The first byte picks the format, so one corpus covers the
// three. A manifest that parses is sharded, as every batch does before it runs.
#include <cstddef>
#include <cstdint>
#include <string>

#include "convgate/batch/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"/fuzz/m.yaml", "/fuzz/m.json", "/fuzz/m.txt"};
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  convgate::Result<convgate::batch::Manifest> manifest =
      convgate::batch::ParseManifest(text, kNames[data[0] % 3]);
  if (!manifest.ok()) return 0;
  for (int count : {1, 3}) {
    for (int index = 0; index < count; ++index) {
      (void)convgate::batch::SelectShard(manifest->entries, index, count);
    }
  }
  return 0;
}
