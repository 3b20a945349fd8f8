// `convgate compare SOURCE TARGET`: both sides on the same samples, every output judged.
#include "cli/command.h"
#include "convgate/gate/workflows.h"
#include "convgate/pipeline/pipeline.h"

namespace convgate::cli {
namespace {

class CompareCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "compare",
        "Run SOURCE and TARGET on the same inputs and compare every output under the tolerance "
        "policy. Either side may be a model (.onnx, .pt) or saved outputs (.npz, .npy, a folder "
        "of .npy, an ONNX test-case folder)");
    app->add_option("SOURCE", source_, "The reference: a model or saved outputs")->required();
    app->add_option("TARGET", target_, "The converted model, or saved outputs");
    flags_.Add(TextFlag("--load-outputs", "PATH",
                        "Use outputs saved with --save-outputs as the source instead of running "
                        "a model; then give only TARGET (and the inputs, with --load-inputs)",
                        {"ref.npz"}, load_outputs_));
    AddSideFlags(flags_, {{"source", &options_.source_backend, &options_.source_exec},
                          {"target", &options_.target_backend, &options_.target_exec}});
    AddToleranceFlags(flags_, options_.policy);
    AddCalibrationFlags(flags_, options_.calibration, CalibrationUse::kOptIn);
    AddAgreementFlags(flags_, options_.agreement);
    AddDataFlags(flags_, options_.data);
    AddCoverageFlag(flags_, options_.min_coverage);
    AddInterfaceFlags(flags_, options_.interface);
    AddLimitFlags(flags_, options_.data.limits, LimitUse::kRuns);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    AddPerNodeFlags(flags_, options_.per_node, PerNodeUse::kOptional);
    AddBenchmarkFlags(flags_, options_.benchmark, BenchmarkUse::kOptional);
    AddGateStoreFlags(flags_, store_);
    AddPipelineFlags(flags_, feedback_options_, PipelineUse::kFeedback, &feedback_);
    flags_.AddCheck([this](const FlagSet&) { return ResolveSides(); });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    for (std::string* side : {&options_.source, &options_.target}) {
      if (std::optional<ExitCode> failed = FetchHfSource(*side, invocation, store_.model_type))
        return *failed;
    }
    if (!feedback_.empty()) return CompareWithFeedback(invocation);
    // Saved outputs as the source (--load-outputs): the target is the model the store tracks.
    store_.model = load_outputs_.empty() ? options_.source : options_.target;
    store_.conversion = "target:" + std::filesystem::path(options_.target).filename().string();
    return RenderFinishAndRecord(gate::CompareModelsGate(options_), invocation, output_, store_);
  }

 private:
  // --feedback: both models as a loop, on the pipeline engine (a one-node pipeline).
  ExitCode CompareWithFeedback(report::Invocation& invocation) {
    if (!load_outputs_.empty()) {
      return ReportError(gate::Stage::kFlags,
                         Status::InvalidArgument("--feedback runs both models as a loop: it "
                                                 "needs SOURCE and TARGET models, not "
                                                 "--load-outputs"));
    }
    std::vector<pipeline::FeedbackPair> pairs;
    for (const std::string& text : feedback_) pairs.push_back(*pipeline::ParseFeedbackPair(text));
    pipeline::PipelineOptions& options = feedback_options_;
    options.data = options_.data;
    options.policy = options_.policy;
    options.per_node = options_.per_node;
    options.strict = options_.per_node.strict;
    options.backend_factory = options_.backend_factory;
    Result<pipeline::Spec> spec = pipeline::FeedbackSpec(
        options_.source, options_.source_backend, options_.target, options_.target_backend, pairs,
        options_.data.generate.dim_per_symbol, options.backend_factory, options_.data);
    if (!spec.ok()) {
      const bool usage = spec.status().code() == StatusCode::kInvalidArgument;
      return ReportError(usage ? gate::Stage::kFlags : gate::Stage::kLoad, spec.status());
    }
    options.spec = std::move(spec).value();
    return RenderAndFinish(pipeline::RunPipelineGate(options), invocation, output_);
  }

  // SOURCE TARGET, or --load-outputs FILE TARGET (the one positional then being TARGET).
  Status ResolveSides() {
    if (load_outputs_.empty()) {
      if (target_.empty()) return Status::InvalidArgument("compare needs SOURCE and TARGET");
      options_.source = source_;
      options_.target = target_;
      return Status::OK();
    }
    if (!target_.empty()) {
      return Status::InvalidArgument("--load-outputs replaces SOURCE: give only TARGET");
    }
    options_.source = load_outputs_;
    options_.target = source_;
    return Status::OK();
  }

  std::string source_;
  std::string target_;
  std::string load_outputs_;
  gate::CompareOptions options_;
  std::vector<std::string> feedback_;
  pipeline::PipelineOptions feedback_options_;
  OutputOptions output_;
  GateStoreOptions store_;
};

}  // namespace

std::unique_ptr<Command> MakeCompareCommand() { return std::make_unique<CompareCommand>(); }

}  // namespace convgate::cli
