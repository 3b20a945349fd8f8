// `convgate convert SOURCE --to KIND -o OUT`: a built-in or external conversion with a timeout,
// retries of transient failures and the content-addressed cache.
#include <iostream>

#include "command.h"
#include "convgate/convert/convert.h"
#include "convgate/core/command_line.h"
#include "convgate/report/conversion.h"

namespace convgate::cli {
namespace {

constexpr char kTorchvisionPrefix[] = "torchvision:";

Result<std::map<std::string, std::string>> ParseParams(const std::vector<std::string>& texts) {
  std::map<std::string, std::string> params;
  for (const std::string& text : texts) {
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status::InvalidArgument("--param '" + text + "': expected NAME=VALUE");
    }
    if (!params.emplace(text.substr(0, equals), text.substr(equals + 1)).second) {
      return Status::InvalidArgument("--param " + text.substr(0, equals) + " is given twice");
    }
  }
  return params;
}

class ConvertCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "convert",
        "Convert a model: opset:N (onnx's version converter), fp16, "
        "ort-optimized:basic|extended|all (ONNX Runtime), onnx (PyTorch TorchScript file or "
        "torchvision:NAME), or any command with --converter. Cached by content; transient "
        "failures are retried with exponential backoff");
    app->add_option("SOURCE", source_, "Source model (or torchvision:NAME for --to onnx)")
        ->required();
    app->add_option("--to", kind_,
                    "Target kind: opset:N, fp16, ort-optimized:LEVEL, onnx, external");
    app->add_option("-o,--output", output_, "Where to write the converted model")->required();
    app->add_option("--param", params_, "Kind parameter NAME=VALUE (repeatable; see README)");
    app->add_option("--converter", converter_,
                    "External converter command with {src} and {out}, split like a shell "
                    "command but run without one");
    app->add_option("--timeout", request_.timeout_seconds, "Seconds per attempt (default 600)");
    app->add_option("--retries", retries_, "Retries of transient failures (default 2)");
    app->add_option("--backoff", request_.backoff_seconds,
                    "Seconds before the first retry, doubling after (default 0.5)");
    app->add_option("--cache-dir", cache_dir_,
                    "Cache directory (default ${CONVGATE_CACHE_DIR:-$HOME/.cache/convgate})");
    app->add_flag("--no-cache", no_cache_, "Neither read nor write the cache");
    app->add_flag("--json", json_, "Print the conversion record as JSON");
    return app;
  }

  int Execute(report::Invocation&) override {
    Result<convert::ConversionRequest> request = BuildRequest();
    if (!request.ok()) return UsageError(request.status());
    convert::ConversionRecord failed;
    Result<convert::ConversionRecord> record = convert::Convert(*request, &failed);
    const convert::ConversionRecord& shown = record.ok() ? *record : failed;
    if (json_) {
      std::cout << report::ConversionJson(shown).dump(2) << "\n";
    } else if (record.ok()) {
      std::cout << report::ConversionText(shown);
    }
    if (record.ok()) return 0;
    std::cerr << "convgate: error (convert, " << convert::ConversionErrorName(failed.error)
              << "): " << record.status().message() << "\n";
    if (!failed.log_tail.empty() && !json_) {
      std::cerr << "converter output (last lines):\n" << failed.log_tail << "\n";
    }
    return convert::ExitCodeFor(failed.error);
  }

 private:
  Result<convert::ConversionRequest> BuildRequest() {
    convert::ConversionRequest request = request_;
    CONVGATE_ASSIGN_OR_RETURN(request.params, ParseParams(params_));
    if (!converter_.empty()) {
      CONVGATE_ASSIGN_OR_RETURN(request.converter_argv, SplitCommandLine(converter_));
      if (kind_.empty()) kind_ = "external";
    }
    if (kind_.empty()) {
      return Status::InvalidArgument("convert needs --to KIND (or --converter 'CMD {src} {out}')");
    }
    request.kind = kind_;
    if (retries_ < 0) return Status::InvalidArgument("--retries cannot be negative");
    request.max_attempts = retries_ + 1;
    request.output = output_;
    request.cache_dir = cache_dir_;
    request.use_cache = !no_cache_;
    if (kind_ == "onnx" && source_.rfind(kTorchvisionPrefix, 0) == 0) {
      if (!request.params.emplace("arch", source_.substr(sizeof(kTorchvisionPrefix) - 1)).second) {
        return Status::InvalidArgument(
            "SOURCE torchvision:NAME and --param arch= both name "
            "the architecture: give one");
      }
    } else {
      request.source = source_;
    }
    return request;
  }

  std::string source_;
  std::string kind_;
  std::string output_;
  std::vector<std::string> params_;
  std::string converter_;
  int retries_ = 2;
  std::string cache_dir_;
  bool no_cache_ = false;
  bool json_ = false;
  convert::ConversionRequest request_;
};

}  // namespace

std::unique_ptr<Command> MakeConvertCommand() { return std::make_unique<ConvertCommand>(); }

}  // namespace convgate::cli
