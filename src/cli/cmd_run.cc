// `convgate run MODEL`: the end-to-end sanity gate.
#include "cli/command.h"
#include "convgate/gate/workflows.h"

namespace convgate::cli {
namespace {

class RunCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "run",
        "Load, compile and run a model; every output must be non-empty, free of NaN/Inf, of the "
        "declared dtype and of a shape consistent with the declared one");
    app->add_option("MODEL", model_, "Model file (.onnx, .pt)")->required();
    AddSideFlags(flags_, {{"", &options_.backend, &options_.exec}});
    AddDataFlags(flags_, options_.data);
    AddLimitFlags(flags_, options_.data.limits, LimitUse::kRuns);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    AddGateStoreFlags(flags_, store_);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    if (std::optional<ExitCode> failed = FetchHfSource(model_, invocation, store_.model_type))
      return *failed;
    options_.model = model_;
    store_.model = model_;
    return RenderFinishAndRecord(gate::RunModelGate(options_), invocation, output_, store_);
  }

 private:
  std::string model_;
  gate::RunOptions options_;
  OutputOptions output_;
  GateStoreOptions store_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace convgate::cli
