#include "convert/fp16_support.h"

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <exception>

#include "convert/converter.h"
#include "convgate/graph/internal/external_data.h"

namespace convgate::convert {
namespace {

using onnx::TensorProto;

bool IsFloat(const onnx::ValueInfoProto& info) {
  return info.type().has_tensor_type() &&
         info.type().tensor_type().elem_type() == TensorProto::FLOAT;
}

template <typename Visit>
void ForEachSubgraph(const onnx::NodeProto& node, const Visit& visit) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.has_g()) visit(attr.g());
    for (const onnx::GraphProto& body : attr.graphs()) visit(body);
  }
}

void CollectNames(const onnx::GraphProto& graph, std::unordered_set<std::string>& taken) {
  for (const auto& info : graph.input()) taken.insert(info.name());
  for (const auto& info : graph.output()) taken.insert(info.name());
  for (const auto& info : graph.value_info()) taken.insert(info.name());
  for (const auto& tensor : graph.initializer()) taken.insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    taken.insert(node.name());
    for (const std::string& name : node.input()) taken.insert(name);
    for (const std::string& name : node.output()) taken.insert(name);
    ForEachSubgraph(node, [&](const onnx::GraphProto& body) { CollectNames(body, taken); });
  }
}

void CollectFloatNames(const onnx::GraphProto& graph, std::unordered_set<std::string>& names) {
  for (const auto* values : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto& info : *values) {
      if (IsFloat(info)) names.insert(info.name());
    }
  }
  for (const TensorProto& tensor : graph.initializer()) {
    if (tensor.data_type() == TensorProto::FLOAT) names.insert(tensor.name());
  }
  for (const onnx::NodeProto& node : graph.node()) {
    ForEachSubgraph(node, [&](const onnx::GraphProto& body) { CollectFloatNames(body, names); });
  }
}

std::string Counted(const std::map<std::string, int64_t>& counts) {
  std::string text;
  for (const auto& [name, count] : counts) {
    text += (text.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  }
  return text;
}

}  // namespace

NameGenerator::NameGenerator(const onnx::ModelProto& model) { CollectNames(model.graph(), taken_); }

std::string NameGenerator::Unique(const std::string& base) {
  std::string name = base;
  for (int suffix = 1; taken_.count(name) > 0; ++suffix) name = base + "_" + std::to_string(suffix);
  taken_.insert(name);
  return name;
}

std::unordered_set<std::string> FloatValueNames(const onnx::ModelProto& model) {
  onnx::ModelProto inferred = model;
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception&) {
    // Inference is a help, not a requirement: the declared types are used as they are.
  }
  std::unordered_set<std::string> names;
  CollectFloatNames(inferred.graph(), names);
  return names;
}

void AddValueInfo(onnx::GraphProto* graph, const std::string& name, int elem_type) {
  onnx::ValueInfoProto* info = graph->add_value_info();
  info->set_name(name);
  info->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

KeepIoCasts PlanKeepIoCasts(const onnx::GraphProto& graph, NameGenerator& names,
                            int32_t half_type) {
  std::unordered_set<std::string> initializers, produced;
  for (const TensorProto& tensor : graph.initializer()) initializers.insert(tensor.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) produced.insert(output);
  }
  KeepIoCasts plan;
  for (int input_idx = 0; input_idx < graph.input_size(); ++input_idx) {
    const onnx::ValueInfoProto& input = graph.input(input_idx);
    if (!IsFloat(input) || initializers.count(input.name()) > 0) continue;
    const std::string value = names.Unique("graph_input_cast_" + std::to_string(input_idx));
    plan.renames[input.name()] = value;
    plan.input_casts.push_back(
        MakeCast(input.name(), value, half_type,
                 names.Unique("graph_input_cast" + std::to_string(input_idx))));
    plan.float16_values.push_back(value);
  }
  for (int output_idx = 0; output_idx < graph.output_size(); ++output_idx) {
    const onnx::ValueInfoProto& output = graph.output(output_idx);
    // An output no node produces is an input passed through or a weight: nothing to cast.
    if (!IsFloat(output) || produced.count(output.name()) == 0) continue;
    const std::string value = names.Unique("graph_output_cast_" + std::to_string(output_idx));
    plan.renames[output.name()] = value;
    plan.output_casts.push_back(
        MakeCast(value, output.name(), TensorProto::FLOAT,
                 names.Unique("graph_output_cast" + std::to_string(output_idx))));
    plan.float16_values.push_back(value);
  }
  return plan;
}

int64_t ApplyKeepIoCasts(KeepIoCasts& casts, onnx::GraphProto& graph, int32_t half_type) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph.mutable_node());
  for (onnx::NodeProto& cast : casts.input_casts) *graph.add_node() = std::move(cast);
  for (onnx::NodeProto& node : nodes) *graph.add_node() = std::move(node);
  for (onnx::NodeProto& cast : casts.output_casts) *graph.add_node() = std::move(cast);
  for (const std::string& value : casts.float16_values) {
    AddValueInfo(&graph, value, half_type);
  }
  return static_cast<int64_t>(casts.input_casts.size() + casts.output_casts.size());
}

Status ValidateFloat16Model(const onnx::ModelProto& model, const onnx::ModelProto& source,
                            std::vector<std::string>& notes, int32_t half_type) {
  const std::string format = HalfTypeName(half_type);
  if (std::string newer = NewerThanChecker(model); !newer.empty()) {
    notes.push_back("ONNX's checker and strict type inference (libonnx) were skipped: the " +
                    format + " model has " + newer + "; ONNX Runtime's load of it is the check");
    return Status::OK();
  }
  // With external data the checker looks for the data files beside the model: the in-memory
  // model has no folder, so it is checked once written (the driver's CheckOnnxModelFile).
  try {
    if (!graph::HasExternalTensors(model)) onnx::checker::check_model(model);
  } catch (const std::exception& error) {
    return Status::FailedPrecondition("the " + format +
                                      " model fails ONNX's checker: " + std::string(error.what()));
  }
  const onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*error_mode=*/1);
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
    return Status::OK();
  } catch (const std::exception& error) {
    const std::string converted_error = error.what();
    onnx::ModelProto source_copy = source;
    try {
      onnx::shape_inference::InferShapes(source_copy, onnx::OpSchemaRegistry::Instance(), strict);
    } catch (const std::exception&) {
      notes.push_back("ONNX's strict type inference fails on the source model already, so the " +
                      format + " model was checked with ONNX's checker only");
      return Status::OK();
    }
    return Status::FailedPrecondition(
        "the " + format +
        " model fails ONNX's strict type inference (an op that needs float32 inputs belongs in "
        "op_block_list): " +
        converted_error);
  }
}

std::vector<std::string> DescribeFp16(const Fp16Report& report, const Fp16Options& options) {
  std::vector<std::string> notes;
  notes.push_back("converted " + std::to_string(report.converted_tensors) +
                  " float32 tensor(s) (initializers and constants) to " +
                  HalfTypeName(options.half_type));
  if (report.blocked_nodes > 0) {
    notes.push_back("kept " + std::to_string(report.blocked_nodes) + " node(s) in float32 (" +
                    Counted(report.blocked_ops) + ")");
  }
  if (!report.no_half_form_ops.empty()) {
    notes.push_back(Counted(report.no_half_form_ops) +
                    " stay float32: ONNX defines no bfloat16 form of them at opset " +
                    std::to_string(report.opset) +
                    " (opset 22 adds one for Conv, the pools and others; libonnx here reaches 17)");
  }
  if (options.keep_io_types) {
    notes.push_back("keep_io_types=1: float inputs and outputs stay float32");
  }
  if (report.casts_inserted > 0) {
    notes.push_back("inserted " + std::to_string(report.casts_inserted) + " Cast node(s)");
  }
  std::vector<std::string> range = Fp16RangeNotes(report.range, options.clamp, options.half_type);
  notes.insert(notes.end(), range.begin(), range.end());
  return notes;
}

}  // namespace convgate::convert
