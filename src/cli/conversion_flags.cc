// The conversion group, shared by `convert` and `verify`: what to convert to, with which
// parameters or external command, where the result goes, and the driver's timeout, retries and
// cache.
#include "cli/flag_groups.h"
#include "convgate/convert/kinds.h"
#include "convgate/core/command_line.h"
#include "convgate/core/numbers.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

// A generous bound on --retries: beyond it a caller has a loop, not a flaky converter.
constexpr int64_t kMaxRetries = 99;

std::string KindsHelp(ConversionUse use) {
  std::string kinds;
  for (const convert::ConversionKind& kind : convert::ConversionKinds()) {
    if (kind.name == "external") continue;  // spelled --converter
    kinds += (kinds.empty() ? "" : " | ") + kind.spelling;
  }
  if (use == ConversionUse::kVerify) {
    kinds +=
        " | opencv (the same ONNX model on OpenCV DNN) | auto (the default without --target "
        "or --converter: a Hugging Face folder goes optimum-openvino, .onnx/.pt/SavedModel "
        "openvino, as OpenVINO's verify-conversion gate chooses)";
  }
  return "Conversion: " + kinds;
}

// `text` wrapped to 100 columns, every line indented by `indent` spaces.
std::string Indented(const std::string& text, size_t indent) {
  const std::string pad(indent, ' ');
  std::string wrapped = WrapText(text, 100 - indent);
  for (size_t pos = 0; (pos = wrapped.find('\n', pos)) != std::string::npos; pos += indent + 1) {
    wrapped.insert(pos + 1, pad);
  }
  return pad + wrapped;
}

Status CheckRequest(ConversionUse use, convert::ConversionRequest& request) {
  if (!request.converter_argv.empty() && request.kind.empty()) request.kind = "external";
  if (request.kind.empty()) {
    if (use == ConversionUse::kVerify) return Status::OK();  // --target, checked by verify
    return Status::InvalidArgument("convert needs --to KIND (or --converter 'CMD {src} {out}')");
  }
  if (use == ConversionUse::kVerify && request.kind == "auto") {
    if (!request.params.empty()) {
      return Status::InvalidArgument(
          "--to auto chooses the conversion, so no --param can be meant for it: name the kind "
          "(--to openvino, --to optimum-openvino, ...)");
    }
    return Status::OK();
  }
  if (use == ConversionUse::kVerify && request.kind == "opencv") {
    if (!request.params.empty()) {
      return Status::InvalidArgument("--to opencv converts nothing and takes no --param");
    }
    return Status::OK();
  }
  return convert::CheckConversionRequest(request);
}

}  // namespace

std::string ConversionParamsHelp() {
  std::string help = "Conversion parameters (--param KEY=VALUE) of each kind, with defaults:\n";
  for (const convert::ConversionKind& kind : convert::ConversionKinds()) {
    help += "  " + kind.spelling + (kind.params.empty() ? ": none" : "") + "\n";
    for (const convert::ConversionParam& param : kind.params) {
      help += Indented(param.name + " (default " + param.default_text + "): " + param.meaning, 4) +
              "\n";
    }
  }
  return help;
}

Flag ParamFlag(convert::ConversionRequest& request) {
  return Flag{.name = "--param",
              .value_name = "KEY=VALUE",
              .help =
                  "A conversion parameter (repeatable); each kind's parameters and their "
                  "defaults are listed below",
              .examples = {"keep_io_types=1", "op_block_list=Resize,TopK"},
              .arity = FlagArity::kRepeated,
              .apply = [&request](const std::string& value) -> Status {
                const size_t equals = value.find('=');
                if (equals == std::string::npos || equals == 0) {
                  return Status::InvalidArgument("'" + value + "': expected KEY=VALUE");
                }
                const std::string key = value.substr(0, equals);
                if (!request.params.emplace(key, value.substr(equals + 1)).second) {
                  return Status::InvalidArgument(key + " is given twice");
                }
                return Status::OK();
              }};
}

void AddConversionFlags(FlagSet& flags, convert::ConversionRequest& request, ConversionUse use) {
  flags.SetGroup("Conversion");
  const convert::ConversionRequest defaults;
  flags.Add({
      Flag{.name = "--to",
           .value_name = "KIND",
           .help = KindsHelp(use),
           .examples = {"opset:17", "fp16", "ort-optimized:all", "onnx"},
           .apply = StoreNonEmpty("kind", request.kind)},
      ParamFlag(request),
      Flag{.name = "--converter",
           .value_name = "'CMD {src} {out}'",
           .help = "An external converter command: {src} and {out} become paths; split like a "
                   "shell command but run without one",
           .examples = {"'my-converter --in {src} --out {out}'"},
           .apply = [&request](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(request.converter_argv, SplitCommandLine(value));
             return Status::OK();
           }},
      Flag{.name = "-o,--output",
           .value_name = "PATH",
           .help = use == ConversionUse::kConvert
                       ? "Where to write the converted model"
                       : "Where the converted model goes (otherwise it stays in the cache)",
           .examples = {"converted.onnx"},
           .apply = StoreNonEmpty("path", request.output)},
      DurationFlag("--timeout", "Time each conversion attempt may take", {"300", "20m"},
                   request.timeout_seconds),
      Flag{.name = "--retries",
           .value_name = "N",
           .help = "Retries of failures that look transient (a timeout, EX_TEMPFAIL, a kill "
                   "from outside, 'try again' in the output)",
           .default_text = std::to_string(defaults.max_attempts - 1),
           .examples = {"0"},
           .apply = [&request](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(const int64_t retries, ParseInteger(value, 0, kMaxRetries));
             request.max_attempts = static_cast<int>(retries) + 1;
             return Status::OK();
           }},
      DurationFlag("--backoff", "Wait before the first retry, doubling after each (capped at 60 s)",
                   {"2s"}, request.backoff_seconds),
      Flag{.name = "--cache-dir",
           .value_name = "DIR",
           .help = "Conversion cache folder",
           .default_text = "${CONVGATE_CACHE_DIR:-~/.cache/convgate}",
           .examples = {"/tmp/convgate-cache"},
           .apply = StoreNonEmpty("folder", request.cache_dir)},
      Flag{.name = "--no-cache",
           .help = "Neither read nor write the conversion cache",
           .arity = FlagArity::kSwitch,
           .apply =
               [&request](const std::string&) {
                 request.use_cache = false;
                 return Status::OK();
               }},
  });
  flags.AddCheck([use, &request](const FlagSet& set) -> Status {
    if (use == ConversionUse::kConvert && !set.Given("--output")) {
      return Status::InvalidArgument("convert needs -o PATH: where to write the converted model");
    }
    return CheckRequest(use, request);
  });
}

}  // namespace convgate::cli
