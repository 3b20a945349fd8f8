// Fuzz target for OpenVINO IR XML (graph/openvino_ir.cc): the layers, ports and rt_info that
// inspect, per-node validation and the precision detection read from an `.xml` convgate did not
// write.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/graph/openvino_ir.h"
#include "convgate/graph/precision.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  (void)convgate::graph::ListOpenVinoIrNodes(xml, "/fuzz/model.xml");
  (void)convgate::graph::IrComputePrecision(xml);
  return 0;
}
