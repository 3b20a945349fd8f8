// `convgate verify SOURCE (--to KIND | --target PATH | --converter CMD)`: convert, run the
// end-to-end sanity gate on the target, compare with the source; verify_result.json says it all.
#include <iostream>

#include "cli/command.h"
#include "convgate/gate/verify.h"

namespace convgate::cli {
namespace {

constexpr char kVerifyExitCodes[] =
    "Exit codes: 0 the gate passed; 1 a check failed (sanity or comparison); 2 usage error, found "
    "before converting; 3 the conversion failed or a model or input could not be loaded or run; "
    "4 internal error; 130/143 interrupted by SIGINT/SIGTERM. A failed gate still writes every "
    "result file.";

class VerifyCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "verify",
        "Convert SOURCE (or take --target), run the end-to-end sanity gate on the target and "
        "compare it with the source. verify_passed is true only when all three pass");
    app->add_option("SOURCE", options_.source,
                    "The model to convert: a Hugging Face folder, .onnx, .pt, a SavedModel (or "
                    "--context's model_id)");
    app->footer(ConversionParamsHelp() + "\n" + kVerifyExitCodes);
    flags_.Add(TextFlag("--target", "PATH",
                        "An already converted model to verify (instead of --to or --converter)",
                        {"converted.onnx"}, options_.target));
    flags_.Add(TextFlag("--context", "FILE",
                        "The orchestrator's pipeline_state.json: model_id is SOURCE when none is "
                        "given, optimum_supported false skips Path A, and verify_result.json goes "
                        "to the folder verify-conversion beside it unless --out says otherwise",
                        {"agent-results/pipeline_state.json"}, context_));
    AddConversionFlags(flags_, options_.conversion, ConversionUse::kVerify);
    AddSideFlags(flags_,
                 {{"source", &options_.compare.source_backend, &options_.compare.source_exec},
                  {"target", &options_.compare.target_backend, &options_.compare.target_exec}});
    AddToleranceFlags(flags_, options_.compare.policy);
    AddCalibrationFlags(flags_, options_.compare.calibration, CalibrationUse::kOptOut);
    AddAgreementFlags(flags_, options_.compare.agreement);
    AddDataFlags(flags_, options_.compare.data);
    AddCoverageFlag(flags_, options_.compare.min_coverage);
    AddInterfaceFlags(flags_, options_.compare.interface);
    AddLimitFlags(flags_, options_.compare.data.limits, LimitUse::kRuns);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    AddPerNodeFlags(flags_, options_.compare.per_node, PerNodeUse::kOptional);
    AddBenchmarkFlags(flags_, options_.compare.benchmark, BenchmarkUse::kOptional);
    AddGateStoreFlags(flags_, store_);
    flags_.AddCheck([this](const FlagSet&) { return gate::CheckVerifyOptions(options_); });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    if (!context_.empty()) {
      Result<gate::VerifyContext> context = gate::ReadVerifyContext(context_);
      if (!context.ok()) return ReportError(gate::Stage::kFlags, context.status());
      if (options_.source.empty()) options_.source = context->model_id;
      options_.optimum_supported = context->optimum_supported;
      if (output_.out_dir.empty()) output_.out_dir = context->out_dir.string();
    }
    if (options_.source.empty()) {
      return ReportError(gate::Stage::kFlags,
                         Status::InvalidArgument("verify needs SOURCE, or --context FILE whose "
                                                 "model_id names the model"));
    }
    // A model that cannot be fetched is the verify's error: its result files say so too.
    std::optional<gate::GateError> fetch_error = ResolveHfRepoSource(options_.source, invocation);
    for (std::string* side : {&options_.source, &options_.target}) {
      if (!fetch_error) fetch_error = ResolveHfSource(*side, invocation, store_.model_type);
    }
    if (fetch_error) {
      gate::VerifyReport report;
      report.source = options_.source;
      report.error = std::move(fetch_error);
      report.verdict = gate::Verdict::kError;
      return RenderFinishAndRecord(std::move(report), invocation, output_, store_);
    }
    options_.model_type = store_.model_type;
    store_.model = options_.source;
    store_.conversion = Conversion();
    store_.conversion_params = options_.conversion.params;
    return RenderFinishAndRecord(gate::VerifyGate(options_), invocation, output_, store_);
  }

 private:
  gate::VerifyOptions options_;
  std::string context_;
  // As a batch manifest entry names it (batch/manifest.h Conversion), so history groups a
  // single verify with the batch entries of the same conversion.
  std::string Conversion() const {
    if (!options_.target.empty()) {
      return "target:" + std::filesystem::path(options_.target).filename().string();
    }
    if (options_.conversion.kind == "external") {
      std::string command;
      for (const std::string& word : options_.conversion.converter_argv) {
        command += (command.empty() ? "" : " ") + word;
      }
      return "converter:" + command;
    }
    return "to:" + (options_.conversion.kind.empty() ? "auto" : options_.conversion.kind);
  }

  OutputOptions output_;
  GateStoreOptions store_;
};

}  // namespace

void WriteVerifyUsageResult(const std::vector<std::string>& args, const Status& status) {
  if (args.empty() || args.front() != "verify") return;
  std::string out_dir;
  std::string context;
  for (size_t idx = 1; idx < args.size(); ++idx) {
    if (args[idx] == "--") break;  // what follows is positional
    if (args[idx] == "--out" && idx + 1 < args.size()) out_dir = args[idx + 1];
    if (args[idx].rfind("--out=", 0) == 0) out_dir = args[idx].substr(6);
    if (args[idx] == "--context" && idx + 1 < args.size()) context = args[idx + 1];
    if (args[idx].rfind("--context=", 0) == 0) context = args[idx].substr(10);
  }
  // A usage error of a verify with a context still leaves its result where the context says.
  if (out_dir.empty() && !context.empty()) {
    out_dir = (std::filesystem::path(context).parent_path() / "verify-conversion").string();
  }
  if (out_dir.empty()) return;
  Status written =
      report::WriteVerifyResultFile(out_dir, report::VerifyUsageErrorJson(status.message()));
  if (!written.ok()) {
    std::cerr << "convgate: error (write): " << ForTerminal(written.message()) << "\n";
  }
}

std::unique_ptr<Command> MakeVerifyCommand() { return std::make_unique<VerifyCommand>(); }

}  // namespace convgate::cli
