// `convgate transform MODEL --pass NAME... -o OUT [--validate] [--list-transformed]`: graph
// passes over an ONNX model, each marking the nodes it touches (transform/transform.h), and with
// --validate the original and the transformed model compared like `convgate compare` does.
#include <iostream>

#include "command.h"
#include "convgate/gate/workflows.h"
#include "convgate/transform/transform.h"
#include "per_node_flags.h"

namespace convgate::cli {
namespace {

std::string PassHelp() {
  std::string names;
  for (const std::string& name : transform::PassNames())
    names += (names.empty() ? "" : ", ") + name;
  return "Pass to apply, in order (repeatable, or a,b): " + names +
         "; parameters as NAME:KEY=VALUE (constant_folding:max_elements=N)";
}

class TransformCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "transform",
        "Apply graph passes to an ONNX model, marking every node each pass creates or changes "
        "with its signature; --validate compares the outputs of both models");
    app->add_option("MODEL", model_, "The ONNX model to transform")->required();
    // One value per --pass (repeatable), so MODEL may follow it.
    app->add_option("--pass", passes_, PassHelp())->required()->allow_extra_args(false);
    app->add_option("-o,--output", output_model_, "Where to write the transformed model")
        ->required();
    app->add_flag("--validate", validate_,
                  "Run both models on the same inputs and compare every output (exit as compare)");
    app->add_flag("--list-transformed", list_transformed_,
                  "List, per pass, every node it created, changed or removed");
    AddToleranceFlags(*app, tolerance_);
    AddDataFlags(*app, data_);
    AddOutputFlags(*app, output_);
    AddPerNodeFlags(*app, per_node_);
    app_ = app;
    return app;
  }

  int Execute(report::Invocation& invocation) override {
    Result<std::vector<transform::PassSpec>> passes = transform::ParsePassSpecs(passes_);
    if (!passes.ok()) return UsageError(passes.status());
    if (!validate_ && !output_.out_dir.empty()) {
      return UsageError(
          Status::InvalidArgument("--out writes compare's result files: give "
                                  "--validate too"));
    }
    Result<gate::DataOptions> data = ToDataOptions(data_);
    if (!data.ok()) return UsageError(data.status());
    Result<compare::Policy> policy = ToPolicy(tolerance_);
    if (!policy.ok()) return UsageError(policy.status());
    Result<gate::PerNodeOptions> per_node = ToPerNodeOptions(per_node_, *app_);
    if (!per_node.ok()) return UsageError(per_node.status());
    if (per_node->enabled && !validate_) {
      return UsageError(
          Status::InvalidArgument("--per-node compares intermediates while "
                                  "validating: give --validate too"));
    }
    Result<transform::TransformRecord> record =
        transform::TransformModelFile(model_, output_model_, *passes);
    if (!record.ok()) {
      std::cerr << "convgate: error (transform): " << record.status().message() << "\n";
      return 3;
    }
    if (!validate_) {
      PrintRecord(*record);
      return 0;
    }
    gate::CompareOptions options;
    options.source = model_;
    options.target = output_model_;
    options.data = std::move(data).value();
    options.policy = std::move(policy).value();
    // --per-node: every intermediate both graphs name (a pass keeps the names of the values it
    // does not rewrite), compared in topological order, so a wrong pass is located at its node.
    options.per_node = *per_node;
    const gate::CompareReport report = gate::CompareModelsGate(options);
    return FinishValidation(*record, report, invocation);
  }

 private:
  void PrintRecord(const transform::TransformRecord& record) const {
    if (output_.json) {
      std::cout << transform::TransformJson(record).dump(2) << "\n";
    } else {
      std::cout << transform::TransformText(record, list_transformed_);
    }
  }

  // Without --json: the transform summary, then compare's table and result files. With --json:
  // one document, the transform record with compare's report.json under "validation".
  int FinishValidation(const transform::TransformRecord& record, const gate::CompareReport& report,
                       report::Invocation& invocation) const {
    if (!output_.json) {
      PrintRecord(record);
      return RenderAndFinish(report, invocation, output_);
    }
    invocation.seconds = ProcessSeconds();
    const nlohmann::json report_json = report::ReportJson(report, invocation);
    int exit_code = gate::ExitCodeFor(report.verdict, report.error);
    if (!output_.out_dir.empty()) {
      Status written =
          report::WriteResultFiles(output_.out_dir, report_json, report::VerifyResultJson(report),
                                   report::JUnitXml(report, invocation));
      if (!written.ok()) {
        std::cerr << "convgate: error (write): " << written.message() << "\n";
        if (exit_code < 3) exit_code = 3;
      }
    }
    nlohmann::json combined = transform::TransformJson(record);
    combined["validation"] = report_json;
    std::cout << combined.dump(2) << "\n";
    if (report.error) std::cerr << "convgate: " << report::ErrorLine(*report.error) << "\n";
    return exit_code;
  }

  std::string model_;
  std::vector<std::string> passes_;
  std::string output_model_;
  bool validate_ = false;
  bool list_transformed_ = false;
  ToleranceFlags tolerance_;
  DataFlags data_;
  OutputFlags output_;
  PerNodeFlags per_node_;
  CLI::App* app_ = nullptr;  // for the per-node flags' "given without --per-node" check
};

}  // namespace

std::unique_ptr<Command> MakeTransformCommand() { return std::make_unique<TransformCommand>(); }

}  // namespace convgate::cli
