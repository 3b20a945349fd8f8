// `convgate pipeline SPEC.yaml`: several models wired by a YAML spec, run step by step with
// feedback state; converted nodes validated per node and end to end.
#include <filesystem>
#include <memory>
#include <vector>

#include "cli/command.h"
#include "convgate/convert/hub_model.h"
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
    AddBenchmarkFlags(flags_, options_.benchmark, BenchmarkUse::kOptional);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    options_.spec_path = spec_;
    options_.strict = options_.per_node.strict;
    // hf:// nodes as everywhere else (hf_sources.cc): fetched, or exported when the repository
    // publishes no ONNX file, with where each came from recorded in the report.
    options_.fetch_hf = [this,
                         &invocation](const std::string& uri) -> Result<std::filesystem::path> {
      CONVGATE_ASSIGN_OR_RETURN(hub::HubOptions hub_options, hub::HubOptionsFromEnvironment(""));
      CONVGATE_ASSIGN_OR_RETURN(convert::HubModel model, convert::FetchHubModel(hub_options, uri));
      if (model.hold) holds_.push_back(model.hold);
      invocation.model_origins.push_back(std::move(model.origin));
      return model.path;
    };
    return RenderAndFinish(pipeline::RunPipelineGate(options_), invocation, output_);
  }

 private:
  std::string spec_;
  pipeline::PipelineOptions options_;
  OutputOptions output_;
  std::vector<std::shared_ptr<void>> holds_;  // converted hf:// models stay valid while run
};

}  // namespace

std::unique_ptr<Command> MakePipelineCommand() { return std::make_unique<PipelineCommand>(); }

}  // namespace convgate::cli
