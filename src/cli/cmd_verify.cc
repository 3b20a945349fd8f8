// `convgate verify SOURCE (--to KIND | --target PATH | --converter CMD)`: convert, run the
// end-to-end sanity gate on the target, compare with the source; verify_result.json says it all.
#include "agreement_flags.h"
#include "command.h"
#include "convgate/core/command_line.h"
#include "convgate/gate/verify.h"
#include "per_node_flags.h"

namespace convgate::cli {
namespace {

class VerifyCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "verify",
        "Convert SOURCE (or take --target), run the end-to-end sanity gate on the target and "
        "compare it with the source. verify_passed is true only when all three pass");
    app->add_option("SOURCE", source_, "The model to convert (.onnx, .pt)")->required();
    app->add_option("--to", to_,
                    "Conversion: opset:N | fp16 | ort-optimized:basic|extended|all | onnx "
                    "(from PyTorch) | opencv (the same ONNX model through OpenCV DNN)");
    app->add_option("--target", target_, "An already converted model to verify");
    app->add_option("--converter", converter_,
                    "An external converter: 'CMD ARG {src} {out}' (argv, no shell)");
    app->add_option("--param", params_, "A conversion parameter KEY=VALUE (repeatable)");
    app->add_option("-o,--output", output_, "Where the converted model goes");
    app->add_option("--timeout", timeout_, "Conversion timeout, seconds (default 600)");
    app->add_option("--retries", retries_, "Retries of transient conversion failures (default 2)");
    app->add_flag("--no-cache", no_cache_, "Convert even if the cache holds the result");
    app->add_option("--source-backend", source_backend_, "Backend for SOURCE (default: format)");
    app->add_option("--target-backend", target_backend_, "Backend for the target");
    AddToleranceFlags(*app, tolerance_);
    AddAgreementFlags(*app, agreement_);
    AddDataFlags(*app, data_);
    AddOutputFlags(*app, output_flags_);
    AddPerNodeFlags(*app, per_node_);
    app_ = app;
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<gate::VerifyOptions> options = Options();
    if (!options.ok()) return UsageError(options.status());
    return RenderAndFinish(gate::VerifyGate(*options), invocation, output_flags_);
  }

 private:
  Result<gate::VerifyOptions> Options() const {
    gate::VerifyOptions options;
    options.source = source_;
    options.to = to_;
    options.target = target_;
    if (!converter_.empty()) {
      CONVGATE_ASSIGN_OR_RETURN(options.converter_argv, SplitCommandLine(converter_));
    }
    for (const std::string& param : params_) {
      const size_t eq = param.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Status::InvalidArgument("--param wants KEY=VALUE, got '" + param + "'");
      }
      options.params[param.substr(0, eq)] = param.substr(eq + 1);
    }
    options.output = output_;
    options.timeout_seconds = timeout_;
    options.max_attempts = retries_ + 1;
    options.use_cache = !no_cache_;
    CONVGATE_ASSIGN_OR_RETURN(options.compare.data, ToDataOptions(data_));
    CONVGATE_ASSIGN_OR_RETURN(options.compare.policy, ToPolicy(tolerance_));
    CONVGATE_ASSIGN_OR_RETURN(options.compare.agreement, ToAgreementConfig(agreement_));
    CONVGATE_ASSIGN_OR_RETURN(options.compare.per_node, ToPerNodeOptions(per_node_, *app_));
    options.compare.source_backend = source_backend_;
    options.compare.target_backend = target_backend_;
    return options;
  }

  std::string source_, to_, target_, converter_, output_;
  std::vector<std::string> params_;
  double timeout_ = 600.0;
  int retries_ = 2;
  bool no_cache_ = false;
  std::string source_backend_, target_backend_;
  ToleranceFlags tolerance_;
  AgreementFlags agreement_;
  DataFlags data_;
  OutputFlags output_flags_;
  PerNodeFlags per_node_;
  CLI::App* app_ = nullptr;  // for the per-node flags' "given without --per-node" check
};

}  // namespace

std::unique_ptr<Command> MakeVerifyCommand() { return std::make_unique<VerifyCommand>(); }

}  // namespace convgate::cli
