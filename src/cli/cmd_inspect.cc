// `convgate inspect PATH`: what a model declares (format, hashes, opsets, inputs/outputs, ops,
// parameters), what a tensor file or ONNX test case holds (names, dtypes, shapes, value ranges,
// NaN/Inf), or what another model format is and which command takes it (inspect/inspect.h).
#include <iostream>

#include "cli/command.h"
#include "convgate/inspect/inspect.h"

namespace convgate::cli {
namespace {

constexpr char kInspectExitCodes[] =
    "Exit codes: 0 shown; 2 usage error; 3 the file is missing, empty, truncated, of no format "
    "convgate knows, not a regular file (a FIFO, a device) or over a limit, or fails the model "
    "file verification (shown, then named: an external data file missing or outside the model's "
    "folder); 4 internal error; 130/143 interrupted by SIGINT/SIGTERM.";

// An hf:// file: where it came from, first in the text and as "model_origins" in the JSON.
void AddOrigins(const std::vector<hub::ModelOrigin>& origins, inspect::Inspection& inspection) {
  if (origins.empty()) return;
  inspection.json["model_origins"] = report::ModelOriginsJson(origins);
  std::string text;
  for (const hub::ModelOrigin& origin : origins) {
    text += "model origin: " + report::ModelOriginText(origin) + "\n";
  }
  inspection.text = text + inspection.text;
}

// 0 unless the model file verification (inspect/model_file.h) failed: then its problem, exit 3.
ExitCode VerificationExit(const nlohmann::json& inspection) {
  const auto found = inspection.find("verification");
  if (found == inspection.end() || found->value("passed", true)) return ExitCode::kPassed;
  const std::string problem = found->value("problem", std::string("verification failed"));
  return ReportError(gate::Stage::kLoad, found->value("category", std::string()) == "missing-file"
                                             ? Status::NotFound(problem)
                                             : Status::DataLoss(problem));
}

class InspectCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "inspect",
        "Show what a file is and holds: an ONNX model's format, sha256, IR version, opsets, "
        "inputs/outputs, op histogram and parameters; the tensors of an .npz/.npy or an ONNX "
        "test-case folder; what a TorchScript, pickle, safetensors or OpenVINO IR file is and "
        "which command takes it");
    app->add_option("PATH", path_,
                    "A model (.onnx, .pt, .xml, ...), tensor file (.npz, .npy, .safetensors) or "
                    "ONNX test-case folder")
        ->required();
    app->footer(kInspectExitCodes);
    AddLimitFlags(flags_, limits_, LimitUse::kFiles);
    AddOutputFlags(flags_, output_, OutputUse::kJson);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    if (std::optional<ExitCode> failed = FetchHfSource(path_, invocation)) return *failed;
    Result<inspect::Inspection> inspection = inspect::InspectPath(path_, limits_);
    if (!inspection.ok()) return ReportError(gate::Stage::kLoad, inspection.status());
    AddOrigins(invocation.model_origins, *inspection);
    std::cout << (output_.json ? DumpJson(inspection->json, output_) + "\n"
                               : ForTerminal(inspection->text));
    std::cout.flush();
    return VerificationExit(inspection->json);
  }

 private:
  std::string path_;
  Limits limits_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeInspectCommand() { return std::make_unique<InspectCommand>(); }

}  // namespace convgate::cli
