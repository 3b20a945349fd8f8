// `convgate reduce`: locate the node (per-node validation), cut it out, capture its tensors, write
// and prove the reproducer.
#include <algorithm>
#include <cstdio>
#include <map>

#include "convgate/core/file_util.h"
#include "convgate/core/numbers.h"
#include "convgate/gate/reduce.h"
#include "convgate/graph/node_model.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/inputs/dataset.h"
#include "convgate/io/npz.h"
#include "convgate/session/side.h"
#include "gate/per_node/run.h"

namespace convgate::gate {
namespace {

constexpr char kModelFile[] = "node.onnx";
constexpr char kInputsFile[] = "inputs.npz";
constexpr char kExpectedFile[] = "expected.npz";
constexpr char kDatasetFile[] = "dataset.npz";

ReduceReport Errored(ReduceReport report, Stage stage, Status status) {
  report.error = GateError{stage, std::move(status)};
  report.verdict = Verdict::kError;
  return report;
}

// Tolerances and errors in the reproducer's command and README: 10 digits, so a tolerance given
// with more than %g's 6 reads back close enough to judge the same way.
std::string Number(double value) { return FormatSignificant(value, 10); }

// The node to reduce: --node, else the culprit, else the first divergent node. -1 when there is
// none; `reason` says which rule chose it.
Result<int> ChooseNode(const PerNodeReport& per_node, const std::string& wanted,
                       std::string& reason) {
  if (!wanted.empty()) {
    for (size_t idx = 0; idx < per_node.nodes.size(); ++idx) {
      const NodeCheck& node = per_node.nodes[idx];
      if (node.node == wanted || node.tensor == wanted) {
        reason = "--node " + wanted;
        return static_cast<int>(idx);
      }
    }
    return Status::NotFound("--node '" + wanted +
                            "': no matched intermediate of the target is produced by a node of "
                            "that name or is a tensor of that name");
  }
  if (per_node.culprit >= 0) {
    reason =
        "culprit: the first node whose own error (run alone on the source's tensors) fails "
        "the tolerance";
    return per_node.culprit;
  }
  // A node that alone is within its own dtype's rounding (a Cast to float16) reproduces nothing
  // but a dtype: the first divergent node that is not such a one.
  for (int idx = std::max(per_node.first_divergent, 0);
       per_node.first_divergent >= 0 && idx < static_cast<int>(per_node.nodes.size()); ++idx) {
    const NodeCheck& node = per_node.nodes[idx];
    if (node.status == NodeStatus::kPassed) continue;
    if (node.local && node.local->computed && node.local->within_rounding) continue;
    reason = idx == per_node.first_divergent
                 ? "first divergent node (no node's own error fails the tolerance: the error "
                   "accumulates; this node alone may not reproduce it)"
                 : "first divergent node whose error alone is more than its dtype's rounding (no "
                   "node's own error fails the tolerance: the error accumulates; this node alone "
                   "may not reproduce it)";
    return idx;
  }
  return -1;
}

// "node 'Conv_conv' passes in the whole model (max |diff| 0 on 2 samples): nothing to reduce
// there; the culprit is ...": where to look instead.
std::string PassingNodeNote(const NodeCheck& node, const PerNodeReport& per_node) {
  std::string note = "node '" + node.node + "' (" + node.op_type + ") passes in the whole model (" +
                     "its output '" + node.tensor + "' has max |diff| " +
                     Number(node.max_abs_error) + " over " + std::to_string(node.samples.size()) +
                     " sample(s), within the tolerance): there is nothing to reduce there";
  const int other = per_node.culprit >= 0 ? per_node.culprit : per_node.first_divergent;
  if (other < 0) return note + ", and no matched intermediate fails";
  const NodeCheck& failing = per_node.nodes[other];
  return note + "; the " + (per_node.culprit >= 0 ? "culprit" : "first divergent node") +
         " is node '" + failing.node + "' (" + failing.op_type + "), which reduce picks without " +
         "--node";
}

struct Sides {
  session::LoadedModel source;
  session::LoadedModel target;
  std::string target_bytes;
  std::vector<std::string> source_values;      // every value the source graph names
  std::map<std::string, DType> target_dtypes;  // what the target computes each value in
};

// Loads one side as the comparison did: resolved from its path and backend flag, created through
// the options' backend factory, with the same load options (--threads, limits, exec command).
Result<session::LoadedModel> LoadSide(const CompareOptions& options, const std::string& path,
                                      const std::string& backend, const ExecOptions& exec,
                                      const std::string& role) {
  CONVGATE_ASSIGN_OR_RETURN(session::ResolvedSide side, session::ResolveSide(path, backend));
  if (side.kind != session::SideKind::kModel) {
    return Status::InvalidArgument(role + " " + path + " holds saved outputs; reduce needs models");
  }
  SideRecord record;
  record.role = role;
  return session::LoadModel(side, *options.backend_factory,
                            session::SideLoadOptions(options.data, exec), record);
}

Result<Sides> LoadSides(const CompareOptions& options) {
  Sides sides;
  CONVGATE_ASSIGN_OR_RETURN(sides.source, LoadSide(options, options.source, options.source_backend,
                                                   options.source_exec, "source"));
  CONVGATE_ASSIGN_OR_RETURN(sides.target, LoadSide(options, options.target, options.target_backend,
                                                   options.target_exec, "target"));
  CONVGATE_ASSIGN_OR_RETURN(sides.target_bytes, ReadFile(options.target));
  CONVGATE_ASSIGN_OR_RETURN(std::string source_bytes, ReadFile(options.source));
  CONVGATE_ASSIGN_OR_RETURN(sides.source_values, graph::IntermediateNames(source_bytes));
  for (const TensorInfo& input : sides.source.model->signature().inputs) {
    sides.source_values.push_back(input.name);
  }
  // Best effort: a value whose dtype inference cannot tell is captured as the source has it.
  (void)graph::InferValueBytes(sides.target_bytes, {}, options.target, &sides.target_dtypes);
  return sides;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// What the reproducer needs from one sample.
struct Captured {
  // The node's inputs: the source's where the source has the value (so the target's node is
  // judged on correct inputs), the target's otherwise (listed in notes). Inputs that are
  // initializers of the target are left to the one-node model.
  TensorMap feeds;
  TensorMap expected;  // the source's value of the node's output: what the node must match
};

// `tensor` as the target holds `name`: cast when both dtypes are floating and differ (a float16
// node is fed, and computes, float16). Notes the cast.
Result<Tensor> AsTarget(const Sides& sides, const std::string& name, Tensor tensor,
                        std::vector<std::string>& notes) {
  const auto wanted = sides.target_dtypes.find(name);
  if (wanted == sides.target_dtypes.end() || wanted->second == tensor.dtype() ||
      !IsFloating(wanted->second) || !IsFloating(tensor.dtype())) {
    return tensor;
  }
  notes.push_back("'" + name + "': the source's " + std::string(DTypeName(tensor.dtype())) +
                  " value rounded to " + std::string(DTypeName(wanted->second)) +
                  ", the dtype the target holds it in");
  return internal::CastFloat(tensor, wanted->second);
}

// One run of the source gives both its inputs and the expected output, each in the dtype the
// target has for it: the reproducer then differs from the source in values, never in a dtype.
Result<Captured> Capture(Sides& sides, const NodeCheck& node, const TensorMap& sample,
                         const std::vector<std::string>& target_values,
                         std::vector<std::string>& notes) {
  std::vector<std::string> from_source, from_target, from_output;
  for (const std::string& name : node.inputs) {
    if (name.empty() || Contains(from_source, name) || Contains(from_target, name) ||
        Contains(from_output, name)) {
      continue;
    }
    if (Contains(sides.source_values, name)) {
      from_source.push_back(name);
    } else if (node.op_type == "Cast" && Contains(target_values, name)) {
      // A Cast the float16 converter added: its input carries the value the source has under
      // the Cast's output name (per_node/local_error.cc).
      from_output.push_back(name);
    } else if (Contains(target_values, name)) {
      from_target.push_back(name);
    }  // else: an initializer of the target, which the one-node model carries itself
  }
  std::vector<std::string> requested = from_source;
  requested.push_back(node.tensor);
  CONVGATE_ASSIGN_OR_RETURN(TensorMap source, sides.source.model->Run(sample, requested));
  Captured captured;
  for (auto& entry : source) {
    if (entry.name == node.tensor) {
      for (const std::string& input : from_output) {
        notes.push_back("input '" + input + "' has no counterpart in the source: the source's '" +
                        node.tensor + "', the value the Cast passes on");
        CONVGATE_ASSIGN_OR_RETURN(Tensor fed, AsTarget(sides, input, entry.tensor.Clone(), notes));
        CONVGATE_RETURN_IF_ERROR(captured.feeds.Insert(input, std::move(fed)));
      }
    }
    CONVGATE_ASSIGN_OR_RETURN(Tensor held,
                              AsTarget(sides, entry.name, std::move(entry.tensor), notes));
    TensorMap& into = entry.name == node.tensor ? captured.expected : captured.feeds;
    CONVGATE_RETURN_IF_ERROR(into.Insert(entry.name, std::move(held)));
  }
  if (!from_target.empty()) {
    CONVGATE_ASSIGN_OR_RETURN(TensorMap own, sides.target.model->Run(sample, from_target));
    for (auto& entry : own) {
      notes.push_back("input '" + entry.name +
                      "' has no counterpart in the source: captured from the target");
      CONVGATE_RETURN_IF_ERROR(captured.feeds.Insert(entry.name, std::move(entry.tensor)));
    }
  }
  return captured;
}

Result<TensorMap> SampleInputs(const Sides& sides, const std::filesystem::path& dataset_path,
                               int sample, const Limits& limits) {
  CONVGATE_ASSIGN_OR_RETURN(
      inputs::Dataset dataset,
      inputs::LoadDataset(dataset_path, sides.target.model->signature(), limits));
  if (sample < 0 || sample >= static_cast<int>(dataset.samples.size())) {
    return Status::Internal("sample " + std::to_string(sample) + " is not in " +
                            dataset_path.string());
  }
  return std::move(dataset.samples[sample]);
}

std::string ReproCommand(const CompareOptions& options, const NodeSampleResult& judged) {
  std::string command = std::string("convgate compare ") + kExpectedFile + " " + kModelFile +
                        " --load-inputs " + kInputsFile + " --atol " + Number(judged.atol) +
                        " --rtol " + Number(judged.rtol);
  if (!options.target_backend.empty() && options.target_backend != "ort") {
    command += " --target-backend " + options.target_backend;
  }
  return command;
}

const NodeSampleResult* FindSample(const NodeCheck& node, int sample) {
  for (const NodeSampleResult& result : node.samples) {
    if (result.sample == sample) return &result;
  }
  return node.samples.empty() ? nullptr : &node.samples.front();
}

// True when every failing check of the reproduction failed because the dtypes differ: compare
// never judges values across dtypes, so such a failure says nothing about the node's numbers.
bool FailsOnDTypeAlone(const CompareReport& reproduction) {
  bool any = false;
  for (const OutputCheck& check : reproduction.checks) {
    if (check.passed) continue;
    if (!check.comparison || check.comparison->dtype_match) return false;
    any = true;
  }
  return any;
}

// "max |diff| 0.031"; with NaN/Inf, which the finite max does not show, "NaN introduced in 256 of
// 2048 elements, max |diff| 0 elsewhere".
std::string ErrorPhrase(const NodeSampleResult& result) {
  const std::string finite = "max |diff| " + Number(result.max_abs_error);
  if (result.introduced_non_finite == 0) return finite;
  const bool both = result.introduced_nan > 0 && result.introduced_inf > 0;
  const std::string kinds = both ? "NaN and Inf" : (result.introduced_nan > 0 ? "NaN" : "Inf");
  return kinds + " introduced in " + std::to_string(result.introduced_non_finite) + " of " +
         std::to_string(result.elements) + " elements, " + finite + " elsewhere";
}

std::string ReproScript(const std::string& command) {
  return "#!/bin/sh\n"
         "# Reproduces the failure convgate reduce found: the one-node model against the source's\n"
         "# values. Exit 1 means it still fails. Set CONVGATE to the binary if it is not on PATH.\n"
         "cd \"$(dirname \"$0\")\" || exit 3\n"
         "exec \"${CONVGATE:-convgate}\" " +
         command.substr(std::string("convgate ").size()) + " \"$@\"\n";
}

std::string FolderReadme(const ReduceReport& report, const NodeCheck& node,
                         const NodeSampleResult* judged) {
  std::string text = "# convgate reduce\n\n";
  text += "Source: " + report.comparison.source.path + "\n";
  text += "Target: " + report.comparison.target.path + "\n\n";
  text += "Node: '" + node.node + "' (" + node.op_type + "), output '" + node.tensor + "'\n";
  text += "Chosen as: " + report.reason + "\n";
  text += "Sample: " + std::to_string(report.sample) + "\n";
  if (judged != nullptr) {
    text += "In the whole model: " + ErrorPhrase(*judged) + ", " +
            std::to_string(judged->mismatches) + " of " + std::to_string(judged->elements) +
            " elements outside atol " + Number(judged->atol) + " + rtol " + Number(judged->rtol) +
            " * |source|\n";
  }
  if (node.local && node.local->computed) {
    text += "Alone on the source's inputs: " + ErrorPhrase(node.local->result) + ", " +
            std::to_string(node.local->result.mismatches) + " elements outside\n";
  }
  text += "\nFiles:\n";
  text +=
      std::string("  ") + kModelFile + "      the target's node alone (with its initializers)\n";
  text += std::string("  ") + kInputsFile + "     its inputs, as the source computed them\n";
  text += std::string("  ") + kExpectedFile + "   its output, as the source computed it\n";
  text += "  repro.sh        runs the command below; exit 1 = the failure reproduces\n\n";
  text += "Command (from this folder):\n\n    " + report.command + "\n";
  for (const std::string& note : report.notes) text += "\nNote: " + note + "\n";
  return text;
}

// Writes the reproducer for node `index` of the per-node report and runs it.
Status WriteReproducer(const ReduceOptions& options, const std::filesystem::path& dataset_path,
                       ReduceReport& report) {
  const NodeCheck& node = report.comparison.per_node->nodes[report.node];
  CONVGATE_ASSIGN_OR_RETURN(Sides sides, LoadSides(options.compare));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::string> target_values,
                            graph::IntermediateNames(sides.target_bytes));
  for (const TensorInfo& input : sides.target.model->signature().inputs) {
    target_values.push_back(input.name);
  }
  CONVGATE_ASSIGN_OR_RETURN(TensorMap sample, SampleInputs(sides, dataset_path, report.sample,
                                                           options.compare.data.limits));
  CONVGATE_ASSIGN_OR_RETURN(Captured captured,
                            Capture(sides, node, sample, target_values, report.notes));
  CONVGATE_ASSIGN_OR_RETURN(
      std::string model,
      graph::SingleNodeModel(sides.target_bytes, static_cast<size_t>(node.node_index),
                             captured.feeds, options.compare.target));
  const std::filesystem::path& dir = options.out_dir;
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(dir / kModelFile, model));
  CONVGATE_RETURN_IF_ERROR(io::WriteNpz(dir / kInputsFile, captured.feeds));
  CONVGATE_RETURN_IF_ERROR(io::WriteNpz(dir / kExpectedFile, captured.expected));
  const NodeSampleResult* judged = FindSample(node, report.sample);
  if (judged == nullptr) return Status::Internal("node '" + node.node + "' has no sample results");
  report.command = ReproCommand(options.compare, *judged);
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(dir / "repro.sh", ReproScript(report.command)));
  std::filesystem::permissions(dir / "repro.sh",
                               std::filesystem::perms::owner_exec |
                                   std::filesystem::perms::group_exec |
                                   std::filesystem::perms::others_exec,
                               std::filesystem::perm_options::add);
  report.files = {kModelFile, kInputsFile, kExpectedFile, "repro.sh", "README.md"};

  // Prove it: the same comparison the command runs.
  CompareOptions repro;
  repro.source = (dir / kExpectedFile).string();
  repro.target = (dir / kModelFile).string();
  repro.target_backend = options.compare.target_backend;
  repro.backend_factory = options.compare.backend_factory;
  repro.data.load_inputs = dir / kInputsFile;
  repro.data.threads = options.compare.data.threads;
  repro.data.limits = options.compare.data.limits;
  repro.policy.global.atol = judged->atol;
  repro.policy.global.rtol = judged->rtol;
  report.reproduction = CompareModelsGate(repro);
  const bool failed = !report.reproduction->error && report.reproduction->verdict == Verdict::kFail;
  const bool dtype_only = failed && FailsOnDTypeAlone(*report.reproduction);
  report.reproduces = failed && !dtype_only;
  if (dtype_only) {
    // A reproducer whose only difference is a dtype reproduces nothing: none is left behind.
    for (const std::string& file : report.files) {
      if (file == "README.md") continue;
      std::error_code ec;
      std::filesystem::remove(dir / file, ec);
    }
    report.files = {"README.md"};
    report.notes.push_back(
        "the node's output dtype differs from the source's and the dtype could not be matched: "
        "the reproducer failed on the dtype alone, which is not the failure found in the model, "
        "so it was not kept");
  } else if (!report.reproduces) {
    report.notes.push_back(
        "the node alone passes on the source's inputs: its error in the whole model is "
        "inherited from upstream nodes whose own errors each stay within the tolerance");
  }
  return WriteFileAtomic(dir / "README.md", FolderReadme(report, node, judged));
}

}  // namespace

ReduceReport ReduceGate(const ReduceOptions& options) {
  ReduceReport report;
  report.out_dir = options.out_dir;
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) {
    return Errored(std::move(report), Stage::kWrite,
                   Status::Unavailable(options.out_dir.string() + ": " + ec.message()));
  }
  CompareOptions compare = options.compare;
  compare.per_node.enabled = true;
  // The reproducer needs the exact inputs: keep them (or reuse the file they came from).
  const std::filesystem::path dataset_path =
      compare.data.load_inputs ? *compare.data.load_inputs : options.out_dir / kDatasetFile;
  if (!compare.data.load_inputs) compare.data.save_inputs = dataset_path;
  report.comparison = CompareModelsGate(compare);
  if (report.comparison.error) {
    report.error = report.comparison.error;
    report.verdict = Verdict::kError;
    return report;
  }
  if (!report.comparison.per_node) {
    return Errored(std::move(report), Stage::kInternal,
                   Status::Internal("per-node validation produced no report"));
  }
  Result<int> chosen = ChooseNode(*report.comparison.per_node, options.node, report.reason);
  if (!chosen.ok()) return Errored(std::move(report), Stage::kFlags, chosen.status());
  report.node = *chosen;
  if (report.node < 0) {
    report.notes.push_back(report.comparison.per_node->nodes.empty()
                               ? "the models share no intermediate tensor names, so no node could "
                                 "be compared: nothing to reduce"
                               : "every matched intermediate tensor passes: nothing to reduce");
    report.verdict = Verdict::kFail;
    return report;
  }
  const NodeCheck& node = report.comparison.per_node->nodes[report.node];
  if (node.status == NodeStatus::kPassed) {
    // Only --node chooses a passing node: it has no failure of its own or inherited to reproduce.
    report.notes.push_back(PassingNodeNote(node, *report.comparison.per_node));
    report.verdict = Verdict::kFail;
    return report;
  }
  report.sample = node.local && node.local->computed ? node.local->sample
                                                     : std::max(node.first_failing_sample, 0);
  if (Status written = WriteReproducer(options, dataset_path, report); !written.ok()) {
    return Errored(std::move(report), Stage::kRun, written);
  }
  report.verdict = report.reproduces ? Verdict::kPass : Verdict::kFail;
  return report;
}

}  // namespace convgate::gate
