// The float16 graph walk (see fp16.h for the semantics and where they come from).
#include "convert/fp16.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "convert/fp16_support.h"

namespace convgate::convert {
namespace {

using onnx::TensorProto;

struct Context {
  Context(const Fp16Options& opts, const onnx::ModelProto& model) : options(opts), names(model) {}
  const Fp16Options& options;
  // keep_io_types: a float graph input or output -> the float16 value nodes use instead.
  std::unordered_map<std::string, std::string> renames;
  std::unordered_set<std::string> float_values;  // typed float32 before the conversion
  // A blocked node's float32 output, by the name consumers use: a blocked consumer reads it as
  // it is, so a chain of blocked nodes stays float32 throughout (no float16 round trip between
  // them, which would overflow exactly where the chain was kept to avoid it).
  std::unordered_map<std::string, std::string> float32_outputs;
  // Initializers only blocked nodes read: they stay float32 (a weight kept in float32 to avoid an
  // overflow must not overflow on the way), read without a Cast.
  std::unordered_set<std::string> float32_initializers;
  NameGenerator names;
  Fp16Report report;
  int64_t opset = 0;  // of the default domain
};

bool IsFloat(const onnx::ValueInfoProto& info) {
  return info.type().has_tensor_type() &&
         info.type().tensor_type().elem_type() == TensorProto::FLOAT;
}

const std::string& Renamed(const Context& ctx, const std::string& name) {
  auto found = ctx.renames.find(name);
  return found == ctx.renames.end() ? name : found->second;
}

std::string NodeLabel(const onnx::NodeProto& node) {
  const std::string& name = node.name().empty() ? node.output(0) : node.name();
  return node.op_type() + " '" + name + "'";
}

Status ConvertGraph(onnx::GraphProto* graph, Context& ctx, bool is_main);

Status ConvertTensorIfFloat(TensorProto* tensor, const std::string& where, Context& ctx) {
  if (tensor->data_type() != TensorProto::FLOAT) return Status::OK();
  ++ctx.report.converted_tensors;
  CONVGATE_RETURN_IF_ERROR(ConvertTensorToFloat16(tensor, ctx.options.clamp, where,
                                                  &ctx.report.range, ctx.options.half_type));
  return ctx.options.converted_sink ? ctx.options.converted_sink(*tensor) : Status::OK();
}

onnx::AttributeProto* FindAttribute(onnx::NodeProto& node, const std::string& name) {
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

onnx::AttributeProto* AddIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t v) {
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(v);
  return attr;
}

// Constant's value_float / value_floats become a float `value` tensor, converted like any other.
void NormalizeConstant(onnx::NodeProto& node) {
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    if (attr.name() != "value_float" && attr.name() != "value_floats") continue;
    TensorProto tensor;
    tensor.set_data_type(TensorProto::FLOAT);
    if (attr.name() == "value_float") {
      tensor.add_float_data(attr.f());
    } else {
      tensor.add_dims(attr.floats_size());
      for (float value : attr.floats()) tensor.add_float_data(value);
    }
    attr.Clear();
    attr.set_name("value");
    attr.set_type(onnx::AttributeProto::TENSOR);
    *attr.mutable_t() = std::move(tensor);
  }
}

// Ops whose output element type comes from an attribute rather than from their inputs: a float
// output there must become float16 too, or its consumers would see float32.
void RetypeOutputAttributes(onnx::NodeProto& node, int32_t half) {
  const std::string& op = node.op_type();
  if (op == "Cast") {
    onnx::AttributeProto* to = FindAttribute(node, "to");
    if (to != nullptr && to->i() == TensorProto::FLOAT) to->set_i(half);
  } else if (op == "RandomNormal" || op == "RandomUniform" || op == "RandomNormalLike" ||
             op == "RandomUniformLike" || op == "EyeLike" || op == "Bernoulli") {
    // RandomNormal and RandomUniform make float32 when `dtype` is absent; the others follow
    // their input then, which is float16 already.
    onnx::AttributeProto* dtype = FindAttribute(node, "dtype");
    if (dtype == nullptr && (op == "RandomNormal" || op == "RandomUniform")) {
      AddIntAttribute(node, "dtype", half);
    } else if (dtype != nullptr && dtype->i() == TensorProto::FLOAT) {
      dtype->set_i(half);
    }
  } else if (op == "ConstantOfShape" && FindAttribute(node, "value") == nullptr) {
    // Without `value` ConstantOfShape makes float32 zeros; state float16 zeros explicitly.
    onnx::AttributeProto* value = node.add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    value->mutable_t()->set_data_type(half);
    value->mutable_t()->add_dims(1);
    value->mutable_t()->set_raw_data(std::string(2, '\0'));
  } else if (op == "Constant") {
    NormalizeConstant(node);
  }
}

Status ConvertAttributes(onnx::NodeProto& node, Context& ctx) {
  for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
    const std::string where = NodeLabel(node) + " attribute '" + attr.name() + "'";
    if (attr.has_t()) CONVGATE_RETURN_IF_ERROR(ConvertTensorIfFloat(attr.mutable_t(), where, ctx));
    for (TensorProto& tensor : *attr.mutable_tensors()) {
      CONVGATE_RETURN_IF_ERROR(ConvertTensorIfFloat(&tensor, where, ctx));
    }
    if (attr.has_sparse_tensor()) {
      CONVGATE_RETURN_IF_ERROR(
          ConvertTensorIfFloat(attr.mutable_sparse_tensor()->mutable_values(), where, ctx));
    }
    if (attr.has_g()) CONVGATE_RETURN_IF_ERROR(ConvertGraph(attr.mutable_g(), ctx, false));
    for (onnx::GraphProto& body : *attr.mutable_graphs()) {
      CONVGATE_RETURN_IF_ERROR(ConvertGraph(&body, ctx, false));
    }
  }
  return Status::OK();
}

// A node kept in float32: float16 inputs are cast to float32 before it (the float32 output of a
// blocked producer is taken as it is), its float32 outputs are written under new names and cast
// back to float16 under the names other consumers use.
void EmitBlockedNode(onnx::NodeProto node, onnx::GraphProto* graph, Context& ctx) {
  const std::string base = node.name().empty() ? node.op_type() : node.name();
  for (int input_idx = 0; input_idx < node.input_size(); ++input_idx) {
    const std::string original = node.input(input_idx);
    if (original.empty()) continue;
    if (auto float32 = ctx.float32_outputs.find(original); float32 != ctx.float32_outputs.end()) {
      node.set_input(input_idx, float32->second);
      continue;
    }
    if (ctx.float32_initializers.count(original) > 0) continue;
    node.set_input(input_idx, Renamed(ctx, original));
    if (ctx.float_values.count(original) == 0) continue;
    const std::string suffix = "_input_cast" + std::to_string(input_idx);
    const std::string value = ctx.names.Unique(base + "_input_cast_" + std::to_string(input_idx));
    *graph->add_node() =
        MakeCast(node.input(input_idx), value, TensorProto::FLOAT, ctx.names.Unique(base + suffix));
    AddValueInfo(graph, value, TensorProto::FLOAT);
    node.set_input(input_idx, value);
    ++ctx.report.casts_inserted;
  }
  std::vector<onnx::NodeProto> output_casts;
  for (int output_idx = 0; output_idx < node.output_size(); ++output_idx) {
    const std::string original = node.output(output_idx);
    if (original.empty()) continue;
    node.set_output(output_idx, Renamed(ctx, original));
    if (ctx.float_values.count(original) == 0) continue;
    const std::string suffix = "_output_cast" + std::to_string(output_idx);
    const std::string value = ctx.names.Unique(base + "_output_cast_" + std::to_string(output_idx));
    output_casts.push_back(MakeCast(value, node.output(output_idx), ctx.options.half_type,
                                    ctx.names.Unique(base + suffix)));
    AddValueInfo(graph, value, TensorProto::FLOAT);
    node.set_output(output_idx, value);
    ctx.float32_outputs[original] = value;
    ++ctx.report.casts_inserted;
  }
  ++ctx.report.blocked_nodes;
  ++ctx.report.blocked_ops[node.op_type()];
  *graph->add_node() = std::move(node);
  for (onnx::NodeProto& cast : output_casts) *graph->add_node() = std::move(cast);
}

// Whether ONNX defines `node`'s op for bfloat16 at the model's opset: every type constraint that
// admits float32 admits bfloat16 too. Conv, the pools and many others gain bfloat16 only at opset
// 22, beyond libonnx 1.12's 17: a bfloat16 Conv would be an invalid model there.
bool HasBfloat16Form(const onnx::NodeProto& node, int64_t opset) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return true;  // not ours to judge
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  if (schema == nullptr) return true;  // the checker reports an unknown op
  for (const auto& constraint : schema->typeConstraintParams()) {
    const auto& allowed = constraint.allowed_type_strs;
    const bool takes_float =
        std::find(allowed.begin(), allowed.end(), "tensor(float)") != allowed.end();
    const bool takes_bf16 =
        std::find(allowed.begin(), allowed.end(), "tensor(bfloat16)") != allowed.end();
    if (takes_float && !takes_bf16) return false;
  }
  return true;
}

// bf16: ONNX has no bfloat16 form of the node's op at the model's opset.
bool LacksHalfForm(const onnx::NodeProto& node, const Fp16Options& options, int64_t opset) {
  return options.half_type == TensorProto::BFLOAT16 && !HasBfloat16Form(node, opset);
}

// Named by op_block_list or node_block_list.
bool InBlockLists(const onnx::NodeProto& node, const Fp16Options& options) {
  return options.op_block_list.count(node.op_type()) > 0 ||
         (!node.name().empty() && options.node_block_list.count(node.name()) > 0);
}

bool IsBlocked(const onnx::NodeProto& node, const Fp16Options& options, int64_t opset) {
  return InBlockLists(node, options) || LacksHalfForm(node, options, opset);
}

Status ConvertNodes(onnx::GraphProto* graph, Context& ctx) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(graph->mutable_node());
  for (onnx::NodeProto& node : nodes) {
    const bool lacks_half_form = LacksHalfForm(node, ctx.options, ctx.opset);
    if (lacks_half_form || InBlockLists(node, ctx.options)) {
      if (lacks_half_form) ++ctx.report.no_half_form_ops[node.op_type()];
      EmitBlockedNode(std::move(node), graph, ctx);
      continue;
    }
    for (std::string& input : *node.mutable_input()) input = Renamed(ctx, input);
    for (std::string& output : *node.mutable_output()) output = Renamed(ctx, output);
    RetypeOutputAttributes(node, ctx.options.half_type);
    CONVGATE_RETURN_IF_ERROR(ConvertAttributes(node, ctx));
    *graph->add_node() = std::move(node);
  }
  return Status::OK();
}

void RetypeValues(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values,
                  const std::unordered_set<std::string>& keep, int32_t half) {
  for (onnx::ValueInfoProto& info : *values) {
    if (IsFloat(info) && keep.count(info.name()) == 0) {
      info.mutable_type()->mutable_tensor_type()->set_elem_type(half);
    }
  }
}

// The main graph's inputs and outputs that keep_io_types leaves float32.
std::unordered_set<std::string> KeptIo(const onnx::GraphProto& graph, const Context& ctx,
                                       bool is_main) {
  std::unordered_set<std::string> keep;
  if (!is_main || !ctx.options.keep_io_types) return keep;
  std::unordered_set<std::string> initializers;
  for (const TensorProto& initializer : graph.initializer())
    initializers.insert(initializer.name());
  // Inputs stay float32 (an output that passes one through too); an input that is also an
  // initializer (IR < 4 models) is a weight, converted like the others.
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name()) == 0) keep.insert(input.name());
  }
  for (const auto& [name, renamed] : ctx.renames) keep.insert(name);
  return keep;
}

// The initializers of `graph` that only blocked nodes of it read (none when no node is blocked).
std::unordered_set<std::string> BlockedOnlyInitializers(const onnx::GraphProto& graph,
                                                        const Context& ctx) {
  std::unordered_map<std::string, bool> only_blocked;  // initializer -> every reader blocked
  for (const TensorProto& initializer : graph.initializer()) {
    if (initializer.data_type() == TensorProto::FLOAT) only_blocked[initializer.name()] = false;
  }
  std::unordered_set<std::string> read;
  for (const onnx::NodeProto& node : graph.node()) {
    // A subgraph body may read any of them implicitly: then none is kept (converted as before).
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g() || attr.graphs_size() > 0) return {};
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    const bool blocked = IsBlocked(node, ctx.options, ctx.opset);
    for (const std::string& input : node.input()) {
      auto found = only_blocked.find(input);
      if (found == only_blocked.end()) continue;
      found->second = read.insert(input).second ? blocked : (found->second && blocked);
    }
  }
  // Read by a subgraph or a graph output too: converted as before.
  for (const onnx::ValueInfoProto& output : graph.output()) only_blocked.erase(output.name());
  std::unordered_set<std::string> kept;
  for (const auto& [name, blocked] : only_blocked) {
    if (blocked && read.count(name) > 0) kept.insert(name);
  }
  return kept;
}

Status ConvertGraph(onnx::GraphProto* graph, Context& ctx, bool is_main) {
  // A body's own set while its nodes are converted; the enclosing graph's again after.
  std::unordered_set<std::string> enclosing = std::move(ctx.float32_initializers);
  ctx.float32_initializers = BlockedOnlyInitializers(*graph, ctx);
  for (TensorProto& initializer : *graph->mutable_initializer()) {
    if (ctx.float32_initializers.count(initializer.name()) > 0) continue;
    CONVGATE_RETURN_IF_ERROR(
        ConvertTensorIfFloat(&initializer, "initializer '" + initializer.name() + "'", ctx));
  }
  // Retype the declared values before the nodes: the Casts around blocked nodes add float32
  // value_info that must stay float32.
  std::unordered_set<std::string> keep = KeptIo(*graph, ctx, is_main);
  keep.insert(ctx.float32_initializers.begin(), ctx.float32_initializers.end());
  RetypeValues(graph->mutable_input(), keep, ctx.options.half_type);
  RetypeValues(graph->mutable_output(), keep, ctx.options.half_type);
  RetypeValues(graph->mutable_value_info(), ctx.float32_initializers, ctx.options.half_type);
  Status converted = ConvertNodes(graph, ctx);
  ctx.float32_initializers = std::move(enclosing);
  return converted;
}

}  // namespace

Result<Fp16Report> ConvertModelToFloat16(onnx::ModelProto& model, const Fp16Options& options) {
  const onnx::ModelProto source = model;
  Context ctx(options, model);
  ctx.float_values = FloatValueNames(model);
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") ctx.opset = import.version();
  }
  ctx.report.opset = ctx.opset;
  // ONNX has bfloat16 from opset 13 (Cast, and every op that takes it): before, not even the
  // Casts keep_io_types inserts are valid.
  if (options.half_type == TensorProto::BFLOAT16 && ctx.opset > 0 && ctx.opset < 13) {
    return Status::FailedPrecondition(
        "the model is at opset " + std::to_string(ctx.opset) +
        ", and ONNX has bfloat16 only from opset 13 (Cast to bfloat16 included): convert it "
        "with --to opset:13 (or later) first, then --to bf16");
  }
  KeepIoCasts io_casts;
  if (options.keep_io_types) {
    io_casts = PlanKeepIoCasts(*model.mutable_graph(), ctx.names, options.half_type);
  }
  ctx.renames = io_casts.renames;
  CONVGATE_RETURN_IF_ERROR(ConvertGraph(model.mutable_graph(), ctx, true));
  ctx.report.casts_inserted +=
      ApplyKeepIoCasts(io_casts, *model.mutable_graph(), options.half_type);
  CONVGATE_RETURN_IF_ERROR(
      ValidateFloat16Model(model, source, ctx.report.notes, options.half_type));
  std::vector<std::string> notes = DescribeFp16(ctx.report, options);
  notes.insert(notes.end(), ctx.report.notes.begin(), ctx.report.notes.end());
  ctx.report.notes = std::move(notes);
  return std::move(ctx.report);
}

}  // namespace convgate::convert
