// `convgate bench MODEL [TARGET]`: how fast each side runs on the gate's own inputs, and with two
// sides the speed verdict between them. `--models` and `--model-file` benchmark a list of models
// one after another, as the model file verification pipeline names them (Hub ids with
// --file-path, hf:// URIs, local paths), each fetched (or converted) and verified first.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "convgate/core/numbers.h"
#include "convgate/core/text_table.h"
#include "convgate/core/units.h"
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
    app->add_option("MODEL", model_,
                    "The model, or the source when TARGET is given (not with --models or "
                    "--model-file)");
    app->add_option("TARGET", target_, "The converted model to compare the speed of");
    flags_.Add(Flag{.name = "--file-path",
                    .aliases = {"--file"},
                    .value_name = "PATH",
                    .help = "The file to benchmark in each Hugging Face repository named by "
                            "hf://org/name or org/name (MODEL, --models, --model-file); fetched, "
                            "or converted when the repository does not publish it",
                    .examples = {"model.onnx", "onnx/model.onnx"},
                    .apply = StoreNonEmpty("file path", file_)});
    flags_.Add(Flag{.name = "--models",
                    .value_name = "ID...",
                    .help = "Benchmark each model in turn: Hub ids (org/name, with --file-path), "
                            "hf:// URIs or local model files",
                    .examples = {"org/bert-tiny"},
                    .arity = FlagArity::kRepeated,
                    .is_list_item = [](const std::string& arg) { return arg.rfind("-", 0) != 0; },
                    .apply = [this](const std::string& value) -> Status {
                      if (value.empty()) return Status::InvalidArgument("an empty model id");
                      models_.push_back(value);
                      return Status::OK();
                    }});
    flags_.Add(TextFlag("--model-file", "FILE",
                        "Benchmark each model listed in FILE, one per line (as --models; blank "
                        "lines and # comments skipped)",
                        {"models.txt"}, model_file_));
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
    if (!models_.empty() || !model_file_.empty()) return BenchList(invocation);
    if (model_.empty()) {
      return ReportError(gate::Stage::kFlags,
                         Status::InvalidArgument("bench needs MODEL, --models or --model-file"));
    }
    if (!file_.empty()) {
      if (model_.rfind("hf://", 0) != 0) {
        return ReportError(gate::Stage::kFlags,
                           Status::InvalidArgument("--file-path names a file in a Hugging Face "
                                                   "repository: MODEL must be hf://org/name"));
      }
      while (!model_.empty() && model_.back() == '/') model_.pop_back();
      model_ += "/" + file_;
    }
    for (std::string* side : {&model_, &target_}) {
      if (side->empty()) continue;
      if (std::optional<ExitCode> failed = FetchHfSource(*side, invocation, store_.model_type))
        return *failed;
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
  // A list entry as a model path or URI: hf://... as given (with --file-path appended to a bare
  // repository), an existing local path as it is, org/name as hf://org/name/<file-path>.
  Result<std::string> ModelSpec(const std::string& id) const {
    std::error_code ec;
    if (id.rfind("hf://", 0) != 0 && std::filesystem::exists(id, ec)) return id;
    std::string uri = id.rfind("hf://", 0) == 0 ? id : "hf://" + id;
    const size_t slashes = std::count(uri.begin() + 5, uri.end(), '/');
    if (slashes == 1) {  // a repository: the file comes from --file-path
      if (file_.empty()) {
        return Status::InvalidArgument("'" + id +
                                       "' names a Hugging Face repository: say which "
                                       "file to benchmark with --file-path (e.g. model.onnx)");
      }
      uri += "/" + file_;
    } else if (slashes == 0 || id.rfind("hf://", 0) != 0) {
      return Status::InvalidArgument("'" + id +
                                     "' is neither a local model file nor a Hub id "
                                     "(org/name) nor an hf:// URI");
    }
    return uri;
  }

  Result<std::vector<std::string>> ListedModels() const {
    std::vector<std::string> ids = models_;
    if (!model_file_.empty()) {
      std::ifstream in(model_file_);
      if (!in) return Status::NotFound(model_file_ + ": cannot read the model list");
      for (std::string line; std::getline(in, line);) {
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
          line.pop_back();
        }
        const size_t start = line.find_first_not_of(" \t");
        if (start != std::string::npos) ids.push_back(line.substr(start));
      }
      if (ids.size() == models_.size()) {
        return Status::InvalidArgument(model_file_ + " lists no model (one per line)");
      }
    }
    return ids;
  }

  // --models / --model-file: each model benchmarked alone, its results under --out DIR/<id>/ and
  // in the store; then one table of them all. The exit code is the worst of the models'.
  ExitCode BenchList(report::Invocation& invocation) {
    if (!model_.empty() || !target_.empty()) {
      return ReportError(gate::Stage::kFlags,
                         Status::InvalidArgument("--models and --model-file name the models: "
                                                 "give no MODEL or TARGET"));
    }
    if (options_.benchmark.gate.any()) {
      return ReportError(gate::Stage::kFlags,
                         Status::InvalidArgument("--min-speedup and --max-slowdown compare two "
                                                 "models: give MODEL and TARGET"));
    }
    Result<std::vector<std::string>> ids = ListedModels();
    if (!ids.ok()) {
      const bool missing = ids.status().code() == StatusCode::kNotFound;
      return ReportError(missing ? gate::Stage::kLoad : gate::Stage::kFlags, ids.status());
    }
    std::vector<std::string> specs;
    for (const std::string& id : *ids) {
      Result<std::string> spec = ModelSpec(id);
      if (!spec.ok()) return ReportError(gate::Stage::kFlags, spec.status());
      specs.push_back(*spec);
    }
    TextTable table({"model", "verdict", "p50 ms (95%)", "p99 ms", "inf/s", "peak memory"});
    ExitCode worst = ExitCode::kPassed;
    const OutputOptions shared = output_;
    for (size_t i = 0; i < specs.size(); ++i) {
      std::string path = specs[i];
      report::Invocation own = invocation;
      own.model_origins.clear();
      OutputOptions output = shared;
      if (!shared.out_dir.empty()) {
        output.out_dir = (std::filesystem::path(shared.out_dir) / EntryFolder((*ids)[i])).string();
      }
      ExitCode code;
      if (std::optional<ExitCode> failed = FetchHfSource(path, own, store_.model_type)) {
        code = *failed;
        table.AddRow({(*ids)[i], "ERROR", "-", "-", "-", "-"});
      } else {
        gate::BenchOptions options = options_;
        options.source = path;
        options.target.clear();
        store_.model = path;
        const gate::BenchReport report = gate::BenchGate(options);
        code = RenderFinishAndRecord(report, own, output, store_);
        AddRow((*ids)[i], report, table);
      }
      if (static_cast<int>(code) > static_cast<int>(worst)) worst = code;
      std::cout << "\n";
    }
    if (!output_.json) std::cout << ForTerminal(table.Render());
    return worst;
  }

  static std::string EntryFolder(const std::string& id) {
    std::string folder = id.rfind("hf://", 0) == 0 ? id.substr(5) : id;
    for (char& c : folder) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        c = '_';
      }
    }
    return folder;
  }

  static void AddRow(const std::string& id, const gate::BenchReport& report, TextTable& table) {
    if (report.error || report.benchmark.sides.empty()) {
      table.AddRow({id, "ERROR", "-", "-", "-", "-"});
      return;
    }
    const bench::SideBenchmark& side = report.benchmark.sides.front();
    const auto ms = [](double value) { return FormatSignificant(value, 3); };
    table.AddRow({id, std::string(report.verdict == Verdict::kPass ? "PASS" : "FAIL"),
                  ms(side.latency.p50_ms) + " (" + ms(side.latency.p50_low_ms) + "-" +
                      ms(side.latency.p50_high_ms) + ")",
                  ms(side.latency.p99_ms), bench::FormatThroughput(side.throughput),
                  side.peak_rss_bytes > 0 ? FormatBytes(side.peak_rss_bytes) : "-"});
  }

  std::vector<std::string> models_;
  std::string model_file_;
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
