// `convgate reduce SOURCE TARGET -o DIR`: the minimal failing subgraph (the node per-node
// validation blames) as a standalone ONNX model with its inputs and the command that reproduces
// the failure, proven to fail on its own.
#include "command.h"
#include "convgate/gate/reduce.h"

namespace convgate::cli {
namespace {

class ReduceCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "reduce",
        "Locate the node that breaks TARGET (compare --per-node: the culprit, else the first "
        "divergent node) and write it as a standalone ONNX model with its inputs captured from "
        "SOURCE, the expected output, and the convgate command that reproduces the failure "
        "(run to prove it does). Exit 0: a reproducer that fails on its own was written");
    app->add_option("SOURCE", source_, "The reference ONNX model")->required();
    app->add_option("TARGET", target_, "The converted ONNX model that diverges")->required();
    app->add_option("-o,--output", out_dir_,
                    "Folder for node.onnx, inputs.npz, expected.npz, repro.sh, README.md and "
                    "the reports (created if needed)")
        ->required();
    app->add_option("--node", node_,
                    "Reduce this node (a node name or the tensor it produces) instead of the one "
                    "per-node validation blames");
    app->add_option("--source-backend", source_backend_, "Backend for SOURCE (default: ort)");
    app->add_option("--target-backend", target_backend_, "Backend for TARGET (default: ort)");
    app->add_option("--memory-budget", memory_budget_,
                    "Bytes of intermediate tensors held at once while locating the node, e.g. "
                    "512MiB (default: a quarter of physical memory)");
    AddToleranceFlags(*app, tolerance_);
    AddDataFlags(*app, data_);
    app->add_flag("--json", output_.json, "Print report.json to stdout instead of the text");
    app->add_option("--color", output_.color, "Colour the text: auto|always|never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<gate::DataOptions> data = ToDataOptions(data_);
    if (!data.ok()) return UsageError(data.status());
    Result<compare::Policy> policy = ToPolicy(tolerance_);
    if (!policy.ok()) return UsageError(policy.status());
    gate::ReduceOptions options;
    if (!memory_budget_.empty()) {
      Result<int64_t> budget = gate::ParseByteSize(memory_budget_);
      if (!budget.ok()) return UsageError(budget.status());
      options.compare.per_node.memory_budget_bytes = *budget;
    }
    options.compare.source = source_;
    options.compare.target = target_;
    options.compare.source_backend = source_backend_;
    options.compare.target_backend = target_backend_;
    options.compare.data = std::move(data).value();
    options.compare.policy = std::move(policy).value();
    options.out_dir = out_dir_;
    options.node = node_;
    // The reports go beside the reproducer.
    output_.out_dir = out_dir_;
    const gate::ReduceReport result = gate::ReduceGate(options);
    invocation.seconds = ProcessSeconds();
    Rendered rendered;
    rendered.report = report::ReportJson(result, invocation);
    rendered.verify_result = report::VerifyResultJson(result.comparison);
    rendered.junit = report::JUnitXml(result.comparison, invocation);
    rendered.console = report::ConsoleText(result, UseColor(output_));
    rendered.error = result.error;
    rendered.exit_code = gate::ExitCodeFor(result.verdict, result.error);
    return Finish(output_, rendered);
  }

 private:
  std::string source_;
  std::string target_;
  std::string out_dir_;
  std::string node_;
  std::string source_backend_;
  std::string target_backend_;
  std::string memory_budget_;
  ToleranceFlags tolerance_;
  DataFlags data_;
  OutputFlags output_;
};

}  // namespace

std::unique_ptr<Command> MakeReduceCommand() { return std::make_unique<ReduceCommand>(); }

}  // namespace convgate::cli
