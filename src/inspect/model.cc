// `convgate inspect` of an ONNX model: its summary as JSON or as text.
#include <algorithm>
#include <cstdio>

#include "convgate/core/text_table.h"
#include "convgate/core/units.h"
#include "convgate/inspect/inspect.h"

namespace convgate::inspect {

using nlohmann::json;

namespace {

json TensorInfoJson(const TensorInfo& info) {
  json dims = json::array();
  for (const Dim& dim : info.shape) {
    if (dim.is_fixed()) {
      dims.push_back(dim.value);
    } else {
      dims.push_back(dim.symbol.empty() ? json(nullptr) : json(dim.symbol));
    }
  }
  return json{{"name", info.name},
              {"dtype", info.type_name},
              {"supported", info.dtype.has_value()},
              {"shape", info.has_shape ? dims : json(nullptr)}};
}

std::string OpsetText(const std::vector<graph::OpsetImport>& opsets) {
  std::string text;
  for (const graph::OpsetImport& opset : opsets) {
    if (!text.empty()) text += ", ";
    text += (opset.domain.empty() ? "ai.onnx" : opset.domain) + " " + std::to_string(opset.version);
  }
  return text;
}

// "5,000 in 12 initializers (19.5 KiB)", and where Constant nodes hold weights too (as in
// paddle2onnx exports) the total first and then how it splits.
std::string ParametersText(const graph::ModelSummary& summary) {
  const std::string initializers = std::to_string(summary.initializer_parameters) + " in " +
                                   std::to_string(summary.initializer_count) + " initializers (" +
                                   FormatBytes(summary.initializer_bytes) + ")";
  const std::string external = summary.has_external_data ? ", external data" : "";
  if (summary.constant_node_count == 0) return initializers + external;
  return std::to_string(summary.parameter_count) + " (" + FormatBytes(summary.parameter_bytes) +
         "): " + initializers + external + ", " + std::to_string(summary.constant_node_parameters) +
         " in " + std::to_string(summary.constant_node_count) + " Constant nodes (" +
         FormatBytes(summary.constant_node_bytes) + ")";
}

}  // namespace

json ModelSummaryJson(const graph::ModelSummary& summary) {
  json opsets = json::array();
  for (const graph::OpsetImport& opset : summary.opsets) {
    opsets.push_back(
        {{"domain", opset.domain.empty() ? "ai.onnx" : opset.domain}, {"version", opset.version}});
  }
  json inputs = json::array(), outputs = json::array();
  for (const TensorInfo& info : summary.signature.inputs) inputs.push_back(TensorInfoJson(info));
  for (const TensorInfo& info : summary.signature.outputs) outputs.push_back(TensorInfoJson(info));
  return json{
      {"schema_version", kModelSummarySchemaVersion},
      {"path", summary.path.string()},
      {"format", summary.format},
      {"sha256", summary.sha256},
      {"file_bytes", summary.file_bytes},
      {"ir_version", summary.ir_version},
      {"opsets", opsets},
      {"producer", {{"name", summary.producer_name}, {"version", summary.producer_version}}},
      {"graph_name", summary.graph_name},
      {"inputs", inputs},
      {"outputs", outputs},
      {"node_count", summary.node_count},
      {"op_histogram", summary.op_histogram},
      {"parameter_count", summary.parameter_count},
      {"parameter_bytes", summary.parameter_bytes},
      {"initializer_count", summary.initializer_count},
      {"initializer_parameters", summary.initializer_parameters},
      {"initializer_bytes", summary.initializer_bytes},
      {"constant_node_count", summary.constant_node_count},
      {"constant_node_parameters", summary.constant_node_parameters},
      {"constant_node_bytes", summary.constant_node_bytes},
      {"has_external_data", summary.has_external_data}};
}

std::string ModelSummaryText(const graph::ModelSummary& summary) {
  std::string out = summary.path.string() + "\n";
  out += "  format       " + summary.format + " (IR " + std::to_string(summary.ir_version) +
         "; opsets " + OpsetText(summary.opsets) + ")\n";
  out += "  sha256       " + summary.sha256 + "\n";
  out += "  size         " + FormatBytes(summary.file_bytes) + "\n";
  if (!summary.producer_name.empty()) {
    out += "  producer     " + summary.producer_name + " " + summary.producer_version + "\n";
  }
  out += "  parameters   " + ParametersText(summary) + "\n\n";
  TextTable io({"", "name", "dtype", "shape"});
  for (const TensorInfo& info : summary.signature.inputs) {
    io.AddRow({"input", info.name, info.type_name, FormatDims(info)});
  }
  for (const TensorInfo& info : summary.signature.outputs) {
    io.AddRow({"output", info.name, info.type_name, FormatDims(info)});
  }
  out += io.Render(false) + "\n";
  std::vector<std::pair<std::string, int64_t>> ops(summary.op_histogram.begin(),
                                                   summary.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  out += "  " + std::to_string(summary.node_count) + " nodes:";
  for (const auto& [op, count] : ops) out += " " + op + " x" + std::to_string(count);
  return out + "\n";
}

}  // namespace convgate::inspect
