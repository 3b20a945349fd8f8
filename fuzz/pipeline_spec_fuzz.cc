// Fuzz target for pipeline specs (pipeline/spec_parse.cc over yaml-cpp): nodes, edges, feedback
// initial values. A spec that parses has every edge described and every node found by name, as
// the wiring check does next.
#include <cstddef>
#include <cstdint>
#include <string>

#include "convgate/pipeline/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::pipeline::Spec> spec =
      convgate::pipeline::ParseSpecText(text, "/fuzz/pipeline.yaml");
  if (!spec.ok()) return 0;
  for (const convgate::pipeline::EdgeSpec& edge : spec->edges) (void)edge.ToString();
  for (const convgate::pipeline::NodeSpec& node : spec->nodes) (void)spec->FindNode(node.name);
  return 0;
}
