// `convgate compare SOURCE TARGET`: both sides on the same samples, every output judged.
#include "cli/command.h"
#include "convgate/gate/workflows.h"

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
    AddAgreementFlags(flags_, options_.agreement);
    AddDataFlags(flags_, options_.data);
    AddLimitFlags(flags_, options_.data.limits, LimitUse::kRuns);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    AddPerNodeFlags(flags_, options_.per_node, PerNodeUse::kOptional);
    AddGateStoreFlags(flags_, store_);
    flags_.AddCheck([this](const FlagSet&) { return ResolveSides(); });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    for (std::string* side : {&options_.source, &options_.target}) {
      if (std::optional<ExitCode> failed = FetchHfSource(*side, invocation)) return *failed;
    }
    // Saved outputs as the source (--load-outputs): the target is the model the store tracks.
    store_.model = load_outputs_.empty() ? options_.source : options_.target;
    store_.conversion = "target:" + std::filesystem::path(options_.target).filename().string();
    return RenderFinishAndRecord(gate::CompareModelsGate(options_), invocation, output_, store_);
  }

 private:
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
  OutputOptions output_;
  GateStoreOptions store_;
};

}  // namespace

std::unique_ptr<Command> MakeCompareCommand() { return std::make_unique<CompareCommand>(); }

}  // namespace convgate::cli
