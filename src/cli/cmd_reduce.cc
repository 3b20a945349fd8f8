// `convgate reduce SOURCE TARGET -o DIR`: the minimal failing subgraph (the node per-node
// validation blames) as a standalone ONNX model with its inputs and the command that reproduces
// the failure, proven to fail on its own.
#include "cli/command.h"
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
    app->add_option("SOURCE", options_.compare.source, "The reference ONNX model")->required();
    app->add_option("TARGET", options_.compare.target, "The converted ONNX model that diverges")
        ->required();
    flags_.Add({
        Flag{.name = "-o,--output",
             .value_name = "DIR",
             .help = "Folder for node.onnx, inputs.npz, expected.npz, repro.sh, README.md and "
                     "the reports (created if needed)",
             .examples = {"bug/"},
             .apply = [this](const std::string& value) -> Status {
               if (value.empty()) return Status::InvalidArgument("the folder is empty");
               options_.out_dir = value;
               output_.out_dir = value;  // the reports go beside the reproducer
               return Status::OK();
             }},
        TextFlag("--node", "NAME",
                 "Reduce this node (a node name or the tensor it produces) instead of the one "
                 "per-node validation blames",
                 {"/features/features.7/conv/conv.0/conv.0.0/Conv"}, options_.node),
    });
    AddSideFlags(flags_,
                 {{"source", &options_.compare.source_backend, &options_.compare.source_exec},
                  {"target", &options_.compare.target_backend, &options_.compare.target_exec}});
    AddToleranceFlags(flags_, options_.compare.policy);
    AddDataFlags(flags_, options_.compare.data);
    AddLimitFlags(flags_, options_.compare.data.limits, LimitUse::kRuns);
    AddPerNodeFlags(flags_, options_.compare.per_node, PerNodeUse::kAlways);
    AddOutputFlags(flags_, output_, OutputUse::kReport);
    flags_.AddCheck([](const FlagSet& flags) {
      return flags.Given("--output")
                 ? Status::OK()
                 : Status::InvalidArgument("reduce needs -o DIR: where the reproducer goes");
    });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    return RenderAndFinish(gate::ReduceGate(options_), invocation, output_);
  }

 private:
  gate::ReduceOptions options_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeReduceCommand() { return std::make_unique<ReduceCommand>(); }

}  // namespace convgate::cli
