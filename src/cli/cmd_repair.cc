// `convgate repair SOURCE --to fp16|bf16|int8-dynamic|int8-static -o OUT`: the nodes
// to keep in float32 so that the reduced-precision conversion passes (gate/repair.h). Prints each
// run, the kept nodes (ONNX node names and op types) and the last verify; --out gets that verify's
// result files, with a "repair" section in report.json.
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "convgate/core/numbers.h"
#include "convgate/gate/repair.h"
#include "convgate/report/render.h"

namespace convgate::cli {
namespace {

nlohmann::json RepairJson(const gate::RepairReport& repair) {
  nlohmann::json kept = nlohmann::json::array();
  for (const gate::KeptNode& node : repair.kept) {
    kept.push_back(
        {{"node", node.node}, {"op_type", node.op_type}, {"why", node.why}, {"run", node.run}});
  }
  return {{"kept_float32", kept},
          {"runs", repair.runs},
          {"seconds", repair.seconds},
          {"steps", repair.steps},
          {"repaired", repair.repaired()},
          {"gave_up",
           repair.gave_up.empty() ? nlohmann::json(nullptr) : nlohmann::json(repair.gave_up)}};
}

std::string RepairText(const gate::RepairReport& repair, const std::string& kind) {
  std::string text = "\nrepair (" + std::to_string(repair.runs) + " run(s), " +
                     FormatSignificant(repair.seconds, 3) + " s):\n";
  for (const std::string& step : repair.steps) text += "  " + step + "\n";
  if (repair.kept.empty()) {
    text += "kept in float32: none\n";
  } else {
    text += "kept in float32 (" + std::to_string(repair.kept.size()) + " node(s); " +
            "--param node_block_list=";
    for (size_t i = 0; i < repair.kept.size(); ++i) {
      text += (i ? "," : "") + repair.kept[i].node;
    }
    text += "):\n";
    for (const gate::KeptNode& node : repair.kept) {
      text += "  " + node.op_type + " '" + node.node + "': " + node.why + "\n";
    }
  }
  const std::string format =
      kind == "bf16" ? "bfloat16" : (kind.find("int8") != std::string::npos ? "int8" : "float16");
  text +=
      repair.repaired()
          ? "REPAIRED: the " + format + " model with those nodes in float32 passes\n"
          : "NOT REPAIRED: " +
                (repair.gave_up.empty() ? std::string("the last run errored") : repair.gave_up) +
                "\n";
  return text;
}

class RepairCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "repair",
        "Find the nodes to keep in float32 so that SOURCE converted with --to fp16 (or bf16, "
        "int8-dynamic, int8-static) passes the gate: verify with per-node "
        "validation, keep the "
        "node the error starts at (the NaN/Inf origin, then the culprit, then the largest added "
        "error; for int8 the quantized layer whose own error has the lowest SNR) in float32 "
        "through the kind's node_block_list, and verify again, until it passes or --max-runs. "
        "Exit 0: repaired (the model at -o passes); 1: not repaired within the runs");
    app->add_option("SOURCE", options_.verify.source, "The float32 ONNX model")->required();
    // The kinds with a node_block_list; --to says which.
    options_.verify.conversion.kind = "fp16";
    flags_.SetGroup("Conversion");
    flags_.Add(
        {Flag{.name = "--to",
              .value_name = "KIND",
              .help = "The conversion to repair: fp16, bf16, int8-dynamic or int8-static (nodes "
                      "are kept float32 through its node_block_list; int8's is ONNX Runtime's "
                      "nodes_to_exclude)",
              .default_text = "fp16",
              .examples = {"fp16", "bf16", "int8-static"},
              .apply = [this](const std::string& value) -> Status {
                if (value != "fp16" && value != "bf16" && value != "int8-dynamic" &&
                    value != "int8-static") {
                  return Status::InvalidArgument(
                      "--to " + value +
                      ": repair keeps nodes in float32 for --to fp16, bf16, int8-dynamic or "
                      "int8-static (the kinds whose node_block_list per-node blame can fill; "
                      "an OpenVINO IR has no local errors to rank)");
                }
                options_.verify.conversion.kind = value;
                return Status::OK();
              }},
         ParamFlag(options_.verify.conversion),
         TextFlag("-o,--output", "PATH", "Where the repaired model goes", {"repaired.onnx"},
                  output_path_)});
    flags_.Add(IntegerFlag("--max-runs", "N",
                           "Verify runs at most (each keeps one more node in float32)", {"12"}, 1,
                           1000, options_.max_runs));
    flags_.Add(DurationFlag("--max-seconds",
                            "A time budget for the whole repair: no verify run starts once it is "
                            "spent, and the repair stops saying what it would keep next (0: none)",
                            {"10m", "600"}, options_.max_seconds));
    AddToleranceFlags(flags_, options_.verify.compare.policy);
    AddDataFlags(flags_, options_.verify.compare.data);
    AddLimitFlags(flags_, options_.verify.compare.data.limits, LimitUse::kRuns);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    flags_.AddCheck([](const FlagSet& set) {
      if (!set.Given("--output")) {
        return Status::InvalidArgument("repair needs -o PATH: where the repaired model goes");
      }
      return Status::OK();
    });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    options_.verify.conversion.output = output_path_;
    const gate::RepairReport repair = gate::RepairGate(options_);
    invocation.seconds = ProcessSeconds();
    Rendered rendered{report::Render(repair.last, invocation, UseColor(output_))};
    rendered.report["repair"] = RepairJson(repair);
    rendered.console += RepairText(repair, options_.verify.conversion.kind);
    if (rendered.exit_code == ExitCode::kPassed && !repair.repaired()) {
      rendered.exit_code = ExitCode::kFailed;
    }
    return Finish(output_, rendered);
  }

 private:
  gate::RepairOptions options_;
  std::string output_path_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeRepairCommand() { return std::make_unique<RepairCommand>(); }

}  // namespace convgate::cli
