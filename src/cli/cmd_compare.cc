// `convgate compare SOURCE TARGET`: both sides on the same samples, every output judged.
#include "agreement_flags.h"
#include "command.h"
#include "convgate/gate/workflows.h"
#include "exec_flags.h"
#include "per_node_flags.h"

namespace convgate::cli {
namespace {

class CompareCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "compare",
        "Run SOURCE and TARGET on the same inputs and compare every output under the tolerance "
        "policy. Either side may be a model (.onnx) or saved outputs (.npz, .npy, a folder of "
        ".npy, an ONNX test-case folder)");
    app->add_option("SOURCE", source_, "The reference: a model or saved outputs")->required();
    app->add_option("TARGET", target_, "The converted model, or saved outputs");
    app->add_option("--load-outputs", load_outputs_,
                    "Use outputs saved with --save-outputs as the source instead of running a "
                    "model; then give only TARGET (and the inputs, with --load-inputs)");
    app->add_option("--source-backend", source_backend_,
                    "Backend for SOURCE: ort, opencv, torch, exec, or outputs for saved outputs "
                    "(default: from the format)");
    app->add_option("--target-backend", target_backend_, "Backend for TARGET (as above)");
    app->add_option("--source-exec", source_exec_,
                    "Run SOURCE with an external command (backend exec): 'PROGRAM ARGS {model} "
                    "{inputs} {outputs}', split like a shell without expansion; it reads "
                    "inputs.npz and writes outputs.npz");
    app->add_option("--target-exec", target_exec_,
                    "Run TARGET with an external command (as above)");
    AddExecTimeoutFlag(*app, exec_timeout_);
    AddToleranceFlags(*app, tolerance_);
    AddAgreementFlags(*app, agreement_);
    AddDataFlags(*app, data_);
    AddOutputFlags(*app, output_);
    AddPerNodeFlags(*app, per_node_);
    app_ = app;
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<gate::DataOptions> data = ToDataOptions(data_);
    if (!data.ok()) return UsageError(data.status());
    Result<compare::Policy> policy = ToPolicy(tolerance_);
    if (!policy.ok()) return UsageError(policy.status());
    Result<compare::AgreementConfig> agreement = ToAgreementConfig(agreement_);
    if (!agreement.ok()) return UsageError(agreement.status());
    Result<gate::PerNodeOptions> per_node = ToPerNodeOptions(per_node_, *app_);
    if (!per_node.ok()) return UsageError(per_node.status());
    gate::CompareOptions options;
    Status sides = ResolveSides(options);
    if (!sides.ok()) return UsageError(sides);
    options.source_backend = source_backend_;
    options.target_backend = target_backend_;
    Result<gate::ExecOptions> source_exec =
        ToExecOptions(source_exec_, exec_timeout_, "--source-exec", options.source_backend);
    if (!source_exec.ok()) return UsageError(source_exec.status());
    Result<gate::ExecOptions> target_exec =
        ToExecOptions(target_exec_, exec_timeout_, "--target-exec", options.target_backend);
    if (!target_exec.ok()) return UsageError(target_exec.status());
    options.source_exec = std::move(source_exec).value();
    options.target_exec = std::move(target_exec).value();
    options.data = std::move(data).value();
    options.policy = std::move(policy).value();
    options.agreement = std::move(agreement).value();
    options.per_node = std::move(per_node).value();
    return RenderAndFinish(gate::CompareModelsGate(options), invocation, output_);
  }

 private:
  // SOURCE TARGET, or --load-outputs FILE TARGET (the one positional then being TARGET).
  Status ResolveSides(gate::CompareOptions& options) const {
    if (load_outputs_.empty()) {
      if (target_.empty()) return Status::InvalidArgument("compare needs SOURCE and TARGET");
      options.source = source_;
      options.target = target_;
      return Status::OK();
    }
    if (!target_.empty()) {
      return Status::InvalidArgument("--load-outputs replaces SOURCE: give only TARGET");
    }
    options.source = load_outputs_;
    options.target = source_;
    return Status::OK();
  }

  std::string load_outputs_;
  std::string source_;
  std::string target_;
  std::string source_backend_;
  std::string target_backend_;
  std::string source_exec_;
  std::string target_exec_;
  double exec_timeout_ = 600.0;
  ToleranceFlags tolerance_;
  AgreementFlags agreement_;
  DataFlags data_;
  OutputFlags output_;
  PerNodeFlags per_node_;
  CLI::App* app_ = nullptr;  // for the per-node flags' "given without --per-node" check
};

}  // namespace

std::unique_ptr<Command> MakeCompareCommand() { return std::make_unique<CompareCommand>(); }

}  // namespace convgate::cli
