// `convgate pipeline`: parse, load every model, validate the wiring, then run N steps with sanity
// checks after every node and, where nodes have targets, validate them (validate.h).
#include <algorithm>
#include <cstring>

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/units.h"
#include "convgate/gate/bench.h"
#include "convgate/inputs/dataset.h"
#include "convgate/loaders/load_data.h"
#include "pipeline/engine.h"
#include "pipeline/validate.h"

namespace convgate::pipeline {
namespace {

using internal::LoadedNode;
using internal::Trace;

PipelineReport Errored(PipelineReport report, gate::Stage stage, const Status& status) {
  report.error = gate::GateError{stage, status};
  report.verdict = gate::Verdict::kError;
  return report;
}

// Initial values and --set values, read before the wiring is checked so that their dtypes and
// shapes are checked with it.
struct Values {
  std::map<size_t, Tensor> initial;         // feedback edge -> value before step 0
  std::map<std::string, Tensor> overrides;  // "node.input" -> value at every step
  std::set<std::string> set_names;
  std::set<size_t> set_initial;  // feedback edges whose initial value --set gave
};

Result<Tensor> MakeInitial(const InitialValue& initial, const Limits& limits) {
  if (!initial.zeros) return internal::ReadTensorFile(initial.file, initial.tensor, limits);
  CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(initial.shape));
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(*initial.dtype, shape));
  if (tensor.byte_size() > 0) std::memset(tensor.bytes().data(), 0, tensor.byte_size());
  return tensor;
}

int FeedbackEdgeInto(const Spec& spec, const std::string& name) {
  for (size_t idx = 0; idx < spec.edges.size(); ++idx) {
    if (spec.edges[idx].feedback && spec.edges[idx].to.ToString() == name)
      return static_cast<int>(idx);
  }
  return -1;
}

// --set NODE.INPUT=FILE: the file's one tensor, or the one named INPUT.
Status ReadSetValue(const Spec& spec, const std::string& name, const std::filesystem::path& file,
                    const Limits& limits, Values& values) {
  const size_t dot = name.find('.');
  const NodeSpec* node = dot == std::string::npos ? nullptr : spec.FindNode(name.substr(0, dot));
  const std::string input = dot == std::string::npos ? name : name.substr(dot + 1);
  if (node == nullptr || FindDecl(node->inputs, input) == nullptr) {
    return Status::InvalidArgument("--set " + name + ": no node input is named '" + name + "'");
  }
  Result<Tensor> tensor = internal::ReadTensorFile(file, "", limits);
  if (!tensor.ok() && file.extension() != ".npy")
    tensor = internal::ReadTensorFile(file, input, limits);
  if (!tensor.ok()) return tensor.status().WithContext("--set " + name);
  const int feedback = FeedbackEdgeInto(spec, name);
  if (feedback >= 0) {
    values.initial[static_cast<size_t>(feedback)] = std::move(tensor).value();
    values.set_initial.insert(static_cast<size_t>(feedback));
  } else {
    values.overrides[name] = std::move(tensor).value();
    values.set_names.insert(name);
  }
  return Status::OK();
}

Result<Values> ReadValues(const Spec& spec, const PipelineOptions& options) {
  Values values;
  for (const auto& [name, file] : options.set_values) {
    CONVGATE_RETURN_IF_ERROR(ReadSetValue(spec, name, file, options.data.limits, values));
  }
  for (size_t idx = 0; idx < spec.edges.size(); ++idx) {
    const EdgeSpec& edge = spec.edges[idx];
    if (!edge.feedback || values.initial.count(idx) != 0) continue;
    Result<Tensor> tensor = MakeInitial(*edge.initial, options.data.limits);
    if (!tensor.ok()) return tensor.status().WithContext("feedback edge " + edge.ToString());
    values.initial[idx] = std::move(tensor).value();
  }
  return values;
}

void Describe(const Spec& spec, const Wiring& wiring, const Values& values,
              PipelineReport& report) {
  for (const TensorInfo& input : wiring.inputs) {
    report.inputs.push_back(input.name + " " + DescribeDecl(input));
  }
  for (const EdgeSpec& edge : spec.edges) {
    if (edge.to.node.empty()) {
      const TensorInfo* decl = FindDecl(spec.FindNode(edge.from.node)->outputs, edge.from.tensor);
      report.outputs.push_back(edge.to.tensor + " <- " + edge.from.ToString() +
                               (decl ? " " + DescribeDecl(*decl) : ""));
    }
  }
  for (size_t idx : wiring.feedback) {
    const EdgeSpec& edge = spec.edges[idx];
    const Tensor& initial = values.initial.at(idx);
    // Zeros say their dtype and shape; a file or --set value is described by what it holds.
    const bool set = values.set_initial.count(idx) != 0;
    std::string initial_text =
        !set && edge.initial->zeros
            ? edge.initial->Describe()
            : (set ? "--set " + edge.to.ToString() : edge.initial->Describe()) + ": " +
                  std::string(DTypeName(initial.dtype())) + initial.shape().ToString();
    report.feedback.push_back(edge.from.ToString() + " -> " + edge.to.ToString() + " (initial " +
                              initial_text + ")");
  }
  for (size_t idx : wiring.order) report.order.push_back(spec.nodes[idx].name);
  report.bindings = wiring.bindings;
}

// The pipeline inputs, one sample per step: loaded (--load-inputs) or generated.
Result<inputs::Dataset> PipelineInputs(const Wiring& wiring, const PipelineOptions& options,
                                       int& steps) {
  Signature signature;
  signature.inputs = wiring.inputs;
  inputs::Dataset dataset;
  if (options.data.inputs_given()) {
    if (options.data.load_inputs.has_value()) {
      CONVGATE_ASSIGN_OR_RETURN(
          dataset, inputs::LoadDataset(*options.data.load_inputs, signature, options.data.limits));
    } else {
      CONVGATE_ASSIGN_OR_RETURN(
          dataset, loaders::LoadData(options.data.loaders, signature, options.data.generate,
                                     options.data.limits));
    }
    CONVGATE_RETURN_IF_ERROR(inputs::ValidateDataset(dataset, signature));
    if (steps == 0) steps = static_cast<int>(dataset.samples.size());
    if (static_cast<int>(dataset.samples.size()) < steps) {
      return Status::FailedPrecondition(
          dataset.origin + " holds " + std::to_string(dataset.samples.size()) +
          " sample(s), one per step, but --steps is " + std::to_string(steps));
    }
    return dataset;
  }
  // --samples N (generated inputs' count) is --steps N: one sample per step.
  if (steps == 0) steps = std::max(1, options.data.generate.samples);
  if (signature.inputs.empty()) {
    dataset.samples.resize(steps);
    dataset.origin = "none: the pipeline has no inputs";
    return dataset;
  }
  inputs::InputOptions generate = options.data.generate;
  generate.samples = steps;
  // Every step's inputs are held at once: refused from their planned shapes before any is made.
  Result<std::vector<inputs::PlannedInput>> planned =
      inputs::PlanGeneratedInputs(signature, generate);
  if (planned.ok()) {
    double per_step = 0;  // a double: 2^60 elements of 8 bytes overflow int64
    for (const inputs::PlannedInput& input : *planned) {
      per_step += static_cast<double>(input.shape.NumElements()) *
                  static_cast<double>(DTypeSize(input.dtype));
    }
    const int64_t limit = options.data.limits.max_run_bytes;
    const double total = per_step * steps;
    if (total > static_cast<double>(limit)) {
      const auto bytes = [](double value) {
        return FormatBytes(static_cast<int64_t>(std::min(value, 9.0e18)));
      };
      return Status::FailedPrecondition(
          "the pipeline inputs of " + std::to_string(steps) + " steps need " + bytes(total) + " (" +
          bytes(per_step) + " per step), over the limit of " + FormatBytes(limit) +
          " (--max-run-bytes; fewer --steps, or raise the limit if the machine can hold that)");
    }
  }
  return inputs::GenerateDataset(signature, generate);
}

gate::DatasetRecord RecordOf(const inputs::Dataset& dataset, int steps) {
  gate::DatasetRecord record;
  record.origin = dataset.origin;
  record.samples = steps;
  record.notes = dataset.notes;
  if (!dataset.samples.empty()) {
    for (const auto& entry : dataset.samples.front()) {
      record.tensors.push_back(
          {entry.name, std::string(DTypeName(entry.tensor.dtype())), entry.tensor.shape().dims()});
    }
  }
  return record;
}

}  // namespace

// --benchmark: each node with a target timed after the run, the pipeline's sessions released
// first (the converted files stay: their holds are kept) so each side's memory is its own.
void BenchmarkNodes(const Spec& spec, std::vector<LoadedNode>& nodes,
                    const PipelineOptions& options, PipelineReport& report) {
  struct Pair {
    std::string name;
    session::PairSpec spec;
    Signature declared;  // the node's inputs as the spec declares them
  };
  std::vector<Pair> pairs;
  std::vector<std::shared_ptr<void>> holds;
  for (size_t idx = 0; idx < nodes.size(); ++idx) {
    if (!nodes[idx].target) continue;
    session::PairSpec pair;
    pair.source = nodes[idx].source.record.path;
    pair.source_backend = nodes[idx].source.record.backend;
    pair.target = nodes[idx].target->record.path;
    pair.target_backend = nodes[idx].target->record.backend;
    pair.data = options.data;
    pair.data.save_inputs.reset();
    pair.data.save_outputs.reset();
    pair.data.load_inputs.reset();  // the pipeline's inputs are not a node's
    pair.backend_factory = options.backend_factory;
    Signature declared;
    declared.inputs = spec.nodes[idx].inputs;
    pairs.push_back({spec.nodes[idx].name, std::move(pair), std::move(declared)});
    holds.push_back(nodes[idx].conversion_hold);
  }
  nodes.clear();
  for (const Pair& pair : pairs) {
    const std::string& name = pair.name;
    PipelineReport::NodeBenchmark& node = report.benchmarks.emplace_back();
    node.node = name;
    // Generated from the node's declarations (a TorchScript node's model declares none).
    Result<inputs::Dataset> samples = inputs::GenerateDataset(pair.declared, options.data.generate);
    if (!samples.ok()) {
      report.error = gate::GateError{
          gate::Stage::kInputs, samples.status().WithContext("benchmarking node '" + name + "'")};
      report.verdict = gate::Verdict::kError;
      return;
    }
    if (auto e = gate::BenchmarkPair(pair.spec, options.benchmark, node.benchmark, &*samples)) {
      report.error =
          gate::GateError{e->stage, e->status.WithContext("benchmarking node '" + name + "'")};
      report.verdict = gate::Verdict::kError;
      return;
    }
    if (bench::SpeedGateFailed(node.benchmark) && report.verdict == gate::Verdict::kPass) {
      report.verdict = gate::Verdict::kFail;
    }
  }
}

PipelineReport RunPipelineGate(const PipelineOptions& options) {
  PipelineReport report;
  report.policy = options.policy;
  report.strict = options.strict;
  Spec spec;
  if (options.spec.has_value()) {
    spec = *options.spec;
  } else {
    Result<Spec> parsed = ParseSpec(options.spec_path);
    if (!parsed.ok()) {
      const bool unreadable = parsed.status().code() != StatusCode::kInvalidArgument;
      return Errored(std::move(report), unreadable ? gate::Stage::kLoad : gate::Stage::kFlags,
                     parsed.status());
    }
    spec = std::move(parsed).value();
  }
  report.spec = spec.path.string();
  report.name = spec.name;
  std::optional<gate::GateError> load_error;
  std::vector<LoadedNode> nodes = internal::LoadNodes(spec, options, load_error);
  if (load_error) return Errored(std::move(report), load_error->stage, load_error->status);
  Result<Values> values = ReadValues(spec, options);
  if (!values.ok()) {
    const bool usage = values.status().code() == StatusCode::kInvalidArgument;
    return Errored(std::move(report), usage ? gate::Stage::kFlags : gate::Stage::kLoad,
                   values.status());
  }
  std::map<size_t, const Tensor*> initial;
  for (const auto& [edge, tensor] : values->initial) initial[edge] = &tensor;
  Result<Wiring> wiring = ValidateWiring(spec, values->set_names, initial);
  if (!wiring.ok()) return Errored(std::move(report), gate::Stage::kFlags, wiring.status());
  Describe(spec, *wiring, *values, report);
  for (size_t idx : wiring->order) {
    NodeResult result;
    result.name = spec.nodes[idx].name;
    result.source.model = nodes[idx].source.record;
    if (nodes[idx].target) report.validated = true;
    if (nodes[idx].converted) {
      result.conversion = options.conversion->kind + ": " + spec.nodes[idx].target;
    }
    report.nodes.push_back(std::move(result));
  }
  if (options.describe) {
    report.verdict = gate::Verdict::kPass;
    return report;
  }
  int steps = options.steps;
  Result<inputs::Dataset> dataset = PipelineInputs(*wiring, options, steps);
  if (!dataset.ok()) {
    const bool usage = dataset.status().code() == StatusCode::kInvalidArgument &&
                       !options.data.load_inputs.has_value();
    return Errored(std::move(report), usage ? gate::Stage::kFlags : gate::Stage::kInputs,
                   dataset.status());
  }
  report.steps = steps;
  report.data = RecordOf(*dataset, steps);
  report = internal::RunAndValidate(spec, *wiring, nodes, *dataset, values->initial,
                                    values->overrides, options, std::move(report));
  if (options.benchmark.enabled && !report.error) BenchmarkNodes(spec, nodes, options, report);
  return report;
}

}  // namespace convgate::pipeline
