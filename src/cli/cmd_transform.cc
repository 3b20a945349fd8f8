// `convgate transform MODEL --pass NAME... -o OUT [--validate] [--list-transformed]`: graph
// passes over an ONNX model, each marking the nodes it touches (transform/transform.h), and with
// --validate the original and the transformed model compared like `convgate compare` does.
#include <iostream>

#include "cli/command.h"
#include "convgate/gate/workflows.h"
#include "convgate/transform/transform.h"

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
    flags_.Add({
        Flag{.name = "--pass",
             .value_name = "NAME[:KEY=VALUE]",
             .help = PassHelp(),
             .examples = {"fold_batchnorm", "eliminate_identity,fold_batchnorm",
                          "constant_folding:max_elements=4096"},
             .arity = FlagArity::kRepeated,
             .apply = [this](const std::string& value) -> Status {
               pass_texts_.push_back(value);
               return Status::OK();
             }},
        TextFlag("-o,--output", "PATH", "Where to write the transformed model", {"out.onnx"},
                 output_model_),
        SwitchFlag("--validate",
                   "Run both models on the same inputs and compare every output (exit as compare)",
                   validate_),
        SwitchFlag("--list-transformed",
                   "List, per pass, every node it created, changed or removed", list_transformed_),
    });
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    // Everything from here on configures --validate's comparison.
    const size_t first_validation_flag = flags_.entries().size();
    AddToleranceFlags(flags_, compare_.policy);
    AddDataFlags(flags_, compare_.data);
    AddLimitFlags(flags_, compare_.data.limits, LimitUse::kRuns);
    AddPerNodeFlags(flags_, compare_.per_node, PerNodeUse::kOptional);
    flags_.AddCheck([this, first_validation_flag](const FlagSet& flags) {
      return CheckFlags(flags, first_validation_flag);
    });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    Result<transform::TransformRecord> record =
        transform::TransformModelFile(model_, output_model_, passes_);
    if (!record.ok()) return ReportError(gate::Stage::kConvert, record.status());
    if (!validate_) {
      PrintRecord(*record);
      return ExitCode::kPassed;
    }
    compare_.source = model_;
    compare_.target = output_model_;
    // --per-node: every intermediate both graphs name (a pass keeps the names of the values it
    // does not rewrite), compared in topological order, so a wrong pass is located at its node.
    const gate::CompareReport report = gate::CompareModelsGate(compare_);
    return FinishValidation(*record, report, invocation);
  }

 private:
  Status CheckFlags(const FlagSet& flags, size_t first_validation_flag) {
    if (pass_texts_.empty()) return Status::InvalidArgument("transform needs --pass NAME");
    if (output_model_.empty()) {
      return Status::InvalidArgument("transform needs -o PATH: where the model goes");
    }
    CONVGATE_ASSIGN_OR_RETURN(passes_, transform::ParsePassSpecs(pass_texts_));
    if (validate_) return Status::OK();
    if (flags.Given("--out")) {
      return Status::InvalidArgument("--out writes compare's result files: give --validate too");
    }
    for (size_t idx = first_validation_flag; idx < flags.entries().size(); ++idx) {
      const std::string name = LongName(flags.entries()[idx].flag);
      if (flags.Given(name)) {
        return Status::InvalidArgument(name +
                                       " configures --validate's comparison: give "
                                       "--validate too");
      }
    }
    return Status::OK();
  }

  void PrintRecord(const transform::TransformRecord& record) const {
    if (output_.json) {
      std::cout << DumpJson(transform::TransformJson(record), output_) << "\n";
    } else {
      std::cout << ForTerminal(transform::TransformText(record, list_transformed_));
    }
  }

  // Without --json: the transform summary, then compare's table and result files. With --json:
  // one document, the transform record with compare's report.json under "validation".
  ExitCode FinishValidation(const transform::TransformRecord& record,
                            const gate::CompareReport& report,
                            report::Invocation& invocation) const {
    if (!output_.json) {
      PrintRecord(record);
      return RenderAndFinish(report, invocation, output_);
    }
    invocation.seconds = ProcessSeconds();
    Rendered rendered{report::Render(report, invocation, /*color=*/false)};
    rendered.printed_json = transform::TransformJson(record);
    (*rendered.printed_json)["validation"] = rendered.report;
    return Finish(output_, rendered);
  }

  std::string model_;
  std::vector<std::string> pass_texts_;
  std::vector<transform::PassSpec> passes_;
  std::string output_model_;
  bool validate_ = false;
  bool list_transformed_ = false;
  gate::CompareOptions compare_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeTransformCommand() { return std::make_unique<TransformCommand>(); }

}  // namespace convgate::cli
