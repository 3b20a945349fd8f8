// `convgate pipeline SPEC.yaml`: several models wired by a YAML spec, run step by step with
// feedback state; converted nodes validated per node and end to end.
#include "cli/command.h"
#include "convgate/hub/hub.h"
#include "convgate/pipeline/pipeline.h"

namespace convgate::cli {
namespace {

class PipelineCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "pipeline",
        "Run a pipeline of models (a YAML spec: nodes, edges, feedback edges with initial "
        "values) for N steps with sanity checks after every node; nodes with a target (or "
        "--to KIND) are validated step by step on the source's inputs and end to end");
    app->add_option("SPEC", spec_, "The pipeline spec (.yaml)")->required();
    AddPipelineFlags(flags_, options_, PipelineUse::kSpec);
    AddDataFlags(flags_, options_.data);
    AddLimitFlags(flags_, options_.data.limits, LimitUse::kRuns);
    AddToleranceFlags(flags_, options_.policy);
    AddPerNodeFlags(flags_, options_.per_node, PerNodeUse::kPipeline);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    options_.spec_path = spec_;
    options_.strict = options_.per_node.strict;
    options_.fetch_hf = [](const std::string& uri) { return hub::FetchHfUri(uri); };
    return RenderAndFinish(pipeline::RunPipelineGate(options_), invocation, output_);
  }

 private:
  std::string spec_;
  pipeline::PipelineOptions options_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakePipelineCommand() { return std::make_unique<PipelineCommand>(); }

}  // namespace convgate::cli
