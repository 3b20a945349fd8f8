// `convgate bench MODEL [TARGET]`: how fast each side runs on the gate's own inputs, and with two
// sides the speed verdict between them.
#include "cli/command.h"
#include "convgate/gate/bench.h"

namespace convgate::cli {
namespace {

class BenchCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "bench",
        "Time MODEL (and TARGET) on the gate's inputs: load and first-inference time, latency "
        "min/p50/p90/p99/max with 95% intervals, throughput and peak memory per side; with "
        "TARGET, the speedup with its noise and the optional gates --min-speedup and "
        "--max-slowdown");
    app->add_option("MODEL", model_, "The model, or the source when TARGET is given")->required();
    app->add_option("TARGET", target_, "The converted model to compare the speed of");
    flags_.Add(TextFlag("--file", "PATH",
                        "With an hf://org/name MODEL: the file in the repository to benchmark",
                        {"model.onnx", "onnx/model.onnx"}, file_));
    AddSideFlags(flags_, {{"source", &options_.source_backend, &options_.source_exec},
                          {"target", &options_.target_backend, &options_.target_exec}});
    AddDataFlags(flags_, options_.data);
    AddLimitFlags(flags_, options_.data.limits, LimitUse::kRuns);
    AddBenchmarkFlags(flags_, options_.benchmark, BenchmarkUse::kCommand);
    AddOutputFlags(flags_, output_, OutputUse::kGate);
    AddGateStoreFlags(flags_, store_);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation& invocation) override {
    if (!file_.empty()) {
      if (model_.rfind("hf://", 0) != 0) {
        return ReportError(gate::Stage::kFlags,
                           Status::InvalidArgument("--file names a file in a Hugging Face "
                                                   "repository: MODEL must be hf://org/name"));
      }
      while (!model_.empty() && model_.back() == '/') model_.pop_back();
      model_ += "/" + file_;
    }
    for (std::string* side : {&model_, &target_}) {
      if (side->empty()) continue;
      if (std::optional<ExitCode> failed = FetchHfSource(*side, invocation)) return *failed;
    }
    options_.source = model_;
    options_.target = target_;
    store_.model = target_.empty() ? model_ : target_;
    if (!target_.empty()) {
      store_.conversion = "target:" + std::filesystem::path(target_).filename().string();
    }
    return RenderFinishAndRecord(gate::BenchGate(options_), invocation, output_, store_);
  }

 private:
  std::string model_;
  std::string target_;
  std::string file_;
  gate::BenchOptions options_;
  OutputOptions output_;
  GateStoreOptions store_;
};

}  // namespace

std::unique_ptr<Command> MakeBenchCommand() { return std::make_unique<BenchCommand>(); }

}  // namespace convgate::cli
