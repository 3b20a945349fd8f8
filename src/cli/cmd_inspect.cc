// `convgate inspect PATH`: what a model declares (format, hashes, opsets, inputs/outputs, ops,
// parameters), what a tensor file or ONNX test case holds (names, dtypes, shapes, value ranges,
// NaN/Inf), or what another model format is and which command takes it (report/inspect.h).
#include <iostream>

#include "command.h"
#include "convgate/report/inspect.h"

namespace convgate::cli {
namespace {

int LoadError(const Status& status) {
  std::cerr << "convgate: error (load): " << status.message() << "\n";
  return 3;
}

class InspectCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "inspect",
        "Show a model's format, sha256, IR version, opsets, inputs/outputs, op histogram and "
        "parameters; or the tensors of an .npz/.npy file");
    app->add_option("PATH", path_, "Model (.onnx) or tensor file (.npz, .npy)")->required();
    app->add_flag("--json", json_, "Print JSON instead of text");
    return app;
  }

  int Execute(report::Invocation&) override {
    Result<report::Inspection> inspection = report::InspectPath(path_);
    if (!inspection.ok()) return LoadError(inspection.status());
    std::cout << (json_ ? inspection->json.dump(2) + "\n" : inspection->text);
    return 0;
  }

 private:
  std::string path_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeInspectCommand() { return std::make_unique<InspectCommand>(); }

}  // namespace convgate::cli
