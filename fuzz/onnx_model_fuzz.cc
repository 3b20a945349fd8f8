// Fuzz target for ONNX model loading as convgate does it before any backend sees the model:
// SummarizeOnnxModelBytes (parse, signature, op histogram, parameter counts over subgraphs and
// Constant nodes; what `inspect` shows and every backend loader calls), its rendering (inspect's
// text and JSON), IntermediateNames and WithOutputs (per-node and reduce mark intermediates as
// outputs, with ONNX shape inference typing them).
//
// Seeds: fuzz/make_seeds.cc. The node test models of libonnx-testdata
// (/usr/share/libonnx-testdata/data/node/*/model.onnx) make a good extra corpus for a long run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "convgate/graph/onnx_model.h"
#include "convgate/inspect/inspect.h"
#include "convgate/report/json_text.h"

namespace {

// Intermediates marked per run: enough to cover typed, inferred and untyped values without
// making a large graph's every run a shape inference over all of them.
constexpr size_t kMaxMarked = 4;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::graph::ModelSummary> summary =
      convgate::graph::SummarizeOnnxModelBytes(bytes, "fuzz.onnx");
  if (!summary.ok()) return 0;
  // What `inspect` prints, text and --json.
  (void)convgate::inspect::ModelSummaryText(*summary);
  (void)convgate::report::DumpJson(convgate::inspect::ModelSummaryJson(*summary));

  convgate::Result<std::vector<std::string>> names = convgate::graph::IntermediateNames(bytes);
  if (!names.ok()) __builtin_trap();  // the model parsed a moment ago
  const std::vector<std::string> wanted(names->begin(),
                                        names->begin() + std::min(names->size(), kMaxMarked));
  convgate::Result<std::string> marked = convgate::graph::WithOutputs(bytes, wanted, "fuzz.onnx");
  if (!marked.ok()) return 0;
  // The marked model must load again, with every value asked for among its outputs.
  convgate::Result<convgate::graph::ModelSummary> again =
      convgate::graph::SummarizeOnnxModelBytes(*marked, "marked.onnx");
  if (!again.ok()) __builtin_trap();
  for (const std::string& name : wanted) {
    const std::vector<convgate::TensorInfo>& outputs = again->signature.outputs;
    if (std::none_of(outputs.begin(), outputs.end(),
                     [&name](const convgate::TensorInfo& output) { return output.name == name; })) {
      __builtin_trap();
    }
  }
  return 0;
}
