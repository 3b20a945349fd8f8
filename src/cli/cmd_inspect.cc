// `convgate inspect PATH`: what a model declares (format, hashes, opsets, inputs/outputs, ops,
// parameters), or what a tensor file holds (names, dtypes, shapes, value ranges, NaN/Inf).
#include <iostream>

#include "command.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/file_util.h"
#include "convgate/gate/task.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/version.h"

namespace convgate::cli {
namespace {

constexpr char kInspectExitCodes[] =
    "Exit codes: 0 shown; 2 usage error; 3 the file could not be read or is not a model or "
    "tensor file; 4 internal error.";

ExitCode LoadError(const Status& status) { return ReportError(gate::Stage::kLoad, status); }

nlohmann::json TensorsJson(const std::string& path, const TensorMap& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& entry : tensors) {
    const compare::ValueSummary values = compare::SummarizeValues(entry.tensor);
    list.push_back({{"name", entry.name},
                    {"dtype", DTypeName(entry.tensor.dtype())},
                    {"shape", entry.tensor.shape().dims()},
                    {"min", values.min},
                    {"max", values.max},
                    {"mean", values.mean},
                    {"nan", values.nan},
                    {"inf", values.pos_inf + values.neg_inf}});
  }
  return {{"schema_version", 1}, {"path", path}, {"format", "tensors"}, {"tensors", list}};
}

std::string TensorsText(const nlohmann::json& json) {
  std::string out = json["path"].get<std::string>() + "\n";
  for (const auto& tensor : json["tensors"]) {
    out += "  " + tensor["name"].get<std::string>() + "  " + tensor["dtype"].get<std::string>() +
           FormatIndex(tensor["shape"].get<std::vector<int64_t>>()) + "  min " +
           tensor["min"].dump() + "  max " + tensor["max"].dump() + "  mean " +
           tensor["mean"].dump() + "  NaN " + tensor["nan"].dump() + "  Inf " +
           tensor["inf"].dump() + "\n";
  }
  return out;
}

class InspectCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "inspect",
        "Show a model's format, sha256, IR version, opsets, inputs/outputs, op histogram and "
        "parameters; or the tensors of an .npz/.npy file");
    app->add_option("PATH", path_, "Model (.onnx) or tensor file (.npz, .npy)")->required();
    app->footer(kInspectExitCodes);
    AddOutputFlags(flags_, output_, OutputUse::kJson);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    const std::filesystem::path path(path_);
    const std::string ext = path.extension().string();
    if (ext == ".npz" || ext == ".npy") return InspectTensors(path, ext);
    Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(path);
    if (!summary.ok()) return LoadError(summary.status());
    const std::optional<gate::DetectedTask> task =
        gate::DetectTask(summary->signature, summary->op_histogram);
    if (output_.json) {
      nlohmann::json out = report::ModelSummaryJson(*summary);
      out["task"] = task ? nlohmann::json{{"task", task->task}, {"evidence", task->evidence}}
                         : nlohmann::json(nullptr);
      out["tool"] = {{"name", "convgate"}, {"version", kVersion}, {"commit", kBuildCommit}};
      std::cout << DumpJson(out, output_) << "\n";
    } else {
      std::cout << report::ModelSummaryText(*summary);
      std::cout << "  task: " << (task ? task->task + " (" + task->evidence + ")" : "not detected")
                << "\n";
    }
    return ExitCode::kPassed;
  }

 private:
  ExitCode InspectTensors(const std::filesystem::path& path, const std::string& ext) {
    TensorMap tensors;
    if (ext == ".npz") {
      Result<TensorMap> read = io::ReadNpz(path);
      if (!read.ok()) return LoadError(read.status());
      tensors = std::move(read).value();
    } else {
      Result<Tensor> read = io::ReadNpy(path);
      if (!read.ok()) return LoadError(read.status());
      tensors.InsertOrAssign(path.stem().string(), std::move(read).value());
    }
    nlohmann::json out = TensorsJson(path.string(), tensors);
    std::cout << (output_.json ? DumpJson(out, output_) + "\n" : TensorsText(out));
    return ExitCode::kPassed;
  }

  std::string path_;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeInspectCommand() { return std::make_unique<InspectCommand>(); }

}  // namespace convgate::cli
