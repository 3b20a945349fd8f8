// `convgate convert SOURCE --to KIND -o OUT`: a built-in or external conversion with a timeout,
// retries of transient failures and the content-addressed cache.
#include <iostream>

#include "cli/command.h"
#include "convgate/convert/convert.h"
#include "convgate/report/conversion.h"

namespace convgate::cli {
namespace {

constexpr char kTorchvisionPrefix[] = "torchvision:";

constexpr char kConvertExitCodes[] =
    "Exit codes: 0 converted (or found in the cache); 2 usage error (an unknown kind or "
    "parameter); 3 the conversion failed, timed out or wrote no valid model; 4 internal error; "
    "130/143 interrupted by SIGINT/SIGTERM (the converter is killed, nothing is left behind).";

class ConvertCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "convert",
        "Convert a model: opset:N (onnx's version converter), fp16, "
        "ort-optimized:basic|extended|all (ONNX Runtime), onnx (PyTorch TorchScript file or "
        "torchvision:NAME), openvino and openvino:fp16 (OpenVINO IR), optimum-openvino and "
        "optimum-onnx (Hugging Face model folders), or any command with --converter. Cached by "
        "content; transient failures are retried with exponential backoff");
    app->add_option("SOURCE", source_, "Source model or folder (or torchvision:NAME for --to onnx)")
        ->required();
    app->footer(ConversionParamsHelp() + "\n" + kConvertExitCodes);
    AddConversionFlags(flags_, request_, ConversionUse::kConvert);
    AddOutputFlags(flags_, output_, OutputUse::kJson);
    flags_.AddCheck([this](const FlagSet&) { return ResolveSource(); });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    convert::ConversionRecord failed;
    Result<convert::ConversionRecord> record = convert::Convert(request_, &failed);
    const convert::ConversionRecord& shown = record.ok() ? *record : failed;
    if (output_.json) {
      std::cout << DumpJson(report::ConversionJson(shown), output_) << "\n";
    } else if (record.ok()) {
      std::cout << ForTerminal(report::ConversionText(shown));
    }
    if (record.ok()) return ExitCode::kPassed;
    std::cerr << "convgate: error (convert, " << convert::ConversionErrorName(failed.error)
              << "): " << ForTerminal(record.status().message()) << "\n";
    if (!failed.log_tail.empty() && !output_.json) {
      std::cerr << "converter output (last lines):\n" << ForTerminal(failed.log_tail) << "\n";
    }
    return convert::ExitCodeFor(failed.error);
  }

 private:
  // SOURCE is a file, or torchvision:NAME for --to onnx (the architecture is the source).
  Status ResolveSource() {
    if (request_.kind == "onnx" && source_.rfind(kTorchvisionPrefix, 0) == 0) {
      const std::string arch = source_.substr(sizeof(kTorchvisionPrefix) - 1);
      if (!request_.params.emplace("arch", arch).second) {
        return Status::InvalidArgument(
            "SOURCE torchvision:NAME and --param arch= both name the architecture: give one");
      }
      return Status::OK();
    }
    request_.source = source_;
    return Status::OK();
  }

  std::string source_;
  convert::ConversionRequest request_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeConvertCommand() { return std::make_unique<ConvertCommand>(); }

}  // namespace convgate::cli
