// `convgate run MODEL`: the end-to-end sanity gate.
#include "command.h"
#include "convgate/gate/workflows.h"
#include "exec_flags.h"

namespace convgate::cli {
namespace {

class RunCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "run",
        "Load, compile and run a model; every output must be non-empty, free of NaN/Inf, of the "
        "declared dtype and of a shape consistent with the declared one");
    app->add_option("MODEL", model_, "Model file (.onnx)")->required();
    app->add_option(
        "--backend", backend_,
        "Backend to run the model: ort, opencv, torch, exec (default: from the format)");
    app->add_option("--exec", exec_,
                    "Run the model with an external command (backend exec): 'PROGRAM ARGS {model} "
                    "{inputs} {outputs}', split like a shell without expansion; it reads "
                    "inputs.npz and writes outputs.npz");
    AddExecTimeoutFlag(*app, exec_timeout_);
    AddDataFlags(*app, data_);
    AddOutputFlags(*app, output_);
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<gate::DataOptions> data = ToDataOptions(data_);
    if (!data.ok()) return UsageError(data.status());
    gate::RunOptions options;
    options.model = model_;
    options.backend = backend_;
    Result<gate::ExecOptions> exec = ToExecOptions(exec_, exec_timeout_, "--exec", options.backend);
    if (!exec.ok()) return UsageError(exec.status());
    options.exec = std::move(exec).value();
    options.data = std::move(data).value();
    return RenderAndFinish(gate::RunModelGate(options), invocation, output_);
  }

 private:
  std::string model_;
  std::string backend_;
  std::string exec_;
  double exec_timeout_ = 600.0;
  DataFlags data_;
  OutputFlags output_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() { return std::make_unique<RunCommand>(); }

}  // namespace convgate::cli
