// Conformance: every ONNX backend node test case from libonnx-testdata through convgate's compare
// workflow (the library call `convgate compare` makes, in this process, so the figure measures
// convgate and not process start-up),
//   convgate compare <case folder (inputs + expected outputs)> <case>/model.onnx
// with ONNX Runtime, at rtol 1e-3 / atol 1e-7. Every --cli-every'th case also runs through the
// real binary, whose exit code must agree with the library's verdict. Prints real counts and
// every case that did not pass. Exit status: 1 if fewer than --min-pass cases pass (on the first
// backend listed), if the binary ever crashed, or if it disagreed with the library.
//
//   node_conformance CONVGATE_BINARY [--data DIR] [--min-pass N] [--jobs N] [--filter SUBSTR]
//                    [--cli-every N] [--backends ort,openvino] [--stride N]
//
// --backends runs every case through each listed backend as the target (`--target-backend`),
// printing each one's counts, one block each, and the cases whose verdicts differ between them.
//
// "Tensor-only" cases are those whose model inputs and outputs are all tensors; cases with
// sequence, optional or map values are skipped (their .pb files are not TensorProtos) and counted
// as skipped, never as passed.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "convgate/gate/workflows.h"
#include "convgate/report/report.h"
#include "testing/subprocess.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string binary;
  fs::path data = "/usr/share/libonnx-testdata/data/node";
  int min_pass = 0;
  int jobs = 2;
  std::string filter;
  // Every stride-th case of the sorted list (1: all): a deterministic sample, for a runtime too
  // slow to run them all on every test run (OpenVINO: one runner process per case).
  int stride = 1;
  int cli_every = 25;  // 0: no case through the binary
  std::vector<std::string> backends = {"ort"};
};

enum class Outcome { kPassed, kFailed, kErrored, kSkipped, kCrashed };

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::kErrored;
  std::string detail;        // first line of the failure or error
  int exit_code = 0;         // what the binary should exit with for the library's verdict
  std::string cli_mismatch;  // set when the binary's exit code disagrees with the library
};

bool AllTensors(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values) {
  for (const auto& value : values) {
    if (!value.type().has_tensor_type()) return false;
  }
  return true;
}

// Skipped when the model cannot be read here or has non-tensor inputs/outputs.
bool IsTensorOnly(const fs::path& model_path, std::string& why) {
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto model;
  if (!in || !model.ParseFromIstream(&in)) {
    why = "model.onnx unreadable";
    return false;
  }
  if (!AllTensors(model.graph().input()) || !AllTensors(model.graph().output())) {
    why = "sequence/optional/map inputs or outputs";
    return false;
  }
  return true;
}

std::string Clip(std::string line) {
  if (line.size() > 220) line = line.substr(0, 217) + "...";
  return line;
}

// What `convgate compare CASE CASE/model.onnx --rtol 1e-3 --atol 1e-7 --threads 1
// --target-backend BACKEND` decides.
void RunInProcess(const fs::path& case_dir, const std::string& backend, CaseResult& result) {
  convgate::gate::CompareOptions options;
  options.source = case_dir.string();
  options.target = (case_dir / "model.onnx").string();
  options.target_backend = backend;
  options.policy.global.rtol = 1e-3;
  options.policy.global.atol = 1e-7;
  options.data.threads = 1;
  const convgate::gate::CompareReport report = convgate::gate::CompareModelsGate(options);
  result.exit_code = convgate::ToInt(convgate::gate::ExitCodeFor(report.verdict, report.error));
  if (report.error) {
    result.outcome = Outcome::kErrored;
    result.detail = "exit " + std::to_string(result.exit_code) + ": " +
                    Clip("convgate: " + convgate::report::ErrorLine(*report.error));
  } else if (report.verdict == convgate::gate::Verdict::kPass) {
    result.outcome = Outcome::kPassed;
  } else {
    result.outcome = Outcome::kFailed;
    const convgate::gate::OutputCheck* failure = report.FirstFailure();
    result.detail = failure != nullptr && !failure->failures.empty()
                        ? Clip("  - " + failure->failures.front())
                        : (report.structure_failures.empty()
                               ? std::string("a classifier agreement check failed")
                               : Clip(report.structure_failures.front()));
  }
}

// The same case through the binary: a crash is a failure of the run, and the exit code must be
// the one the library's verdict maps to.
void RunThroughBinary(const Options& options, const fs::path& case_dir, const std::string& backend,
                      CaseResult& result) {
  convgate::testing::ProcessResult run = convgate::testing::RunProcess(
      {options.binary, "compare", case_dir.string(), (case_dir / "model.onnx").string(), "--rtol",
       "1e-3", "--atol", "1e-7", "--threads", "1", "--color", "never", "--target-backend",
       backend});
  if (run.signal != 0) {
    result.outcome = Outcome::kCrashed;
    result.detail = "the binary was killed by signal " + std::to_string(run.signal);
    return;
  }
  if (run.exit_code != result.exit_code) {
    result.cli_mismatch = "the binary exited " + std::to_string(run.exit_code) +
                          ", the library's verdict means " + std::to_string(result.exit_code);
  }
}

CaseResult RunCase(const Options& options, const fs::path& case_dir, const std::string& backend,
                   bool through_binary) {
  CaseResult result;
  result.name = case_dir.filename().string();
  std::string why;
  if (!IsTensorOnly(case_dir / "model.onnx", why)) {
    result.outcome = Outcome::kSkipped;
    result.detail = why;
    return result;
  }
  RunInProcess(case_dir, backend, result);
  if (through_binary) RunThroughBinary(options, case_dir, backend, result);
  return result;
}

bool ParseOptions(int argc, char** argv, Options& options) {
  if (argc < 2) return false;
  options.binary = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--data") {
      options.data = argv[i + 1];
    } else if (flag == "--min-pass") {
      options.min_pass = std::atoi(argv[i + 1]);
    } else if (flag == "--jobs") {
      options.jobs = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--filter") {
      options.filter = argv[i + 1];
    } else if (flag == "--stride") {
      options.stride = std::max(1, std::atoi(argv[i + 1]));
    } else if (flag == "--cli-every") {
      options.cli_every = std::max(0, std::atoi(argv[i + 1]));
    } else if (flag == "--backends") {
      options.backends.clear();
      std::string_view rest = argv[i + 1];
      while (!rest.empty()) {
        const size_t comma = rest.find(',');
        if (comma != 0) options.backends.emplace_back(rest.substr(0, comma));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      if (options.backends.empty()) return false;
    } else {
      return false;
    }
  }
  return true;
}

std::vector<fs::path> ListCases(const Options& options) {
  std::vector<fs::path> cases;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options.data, ec)) {
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    if (!options.filter.empty() &&
        entry.path().filename().string().find(options.filter) == std::string::npos) {
      continue;
    }
    cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());
  if (options.stride > 1) {
    std::vector<fs::path> sample;
    for (size_t idx = 0; idx < cases.size(); idx += static_cast<size_t>(options.stride)) {
      sample.push_back(cases[idx]);
    }
    cases = std::move(sample);
  }
  return cases;
}

std::vector<CaseResult> RunAll(const Options& options, const std::vector<fs::path>& cases,
                               const std::string& backend) {
  std::vector<CaseResult> results(cases.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int job = 0; job < options.jobs; ++job) {
    workers.emplace_back([&] {
      for (size_t idx = next++; idx < cases.size(); idx = next++) {
        const bool through_binary = options.cli_every > 0 && idx % options.cli_every == 0;
        results[idx] = RunCase(options, cases[idx], backend, through_binary);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return results;
}

// "ONNX Runtime" for the messages; other backends by their registry name.
std::string BackendTitle(const std::string& backend) {
  if (backend == "ort") return "ONNX Runtime";
  if (backend == "openvino") return "OpenVINO CPU";
  return backend;
}

// Prints one backend's failures and counts; returns the number passed, or -1 when the run must
// fail whatever the count (a crash, a binary disagreeing with the library).
int Report(const Options& options, const std::string& backend,
           const std::vector<CaseResult>& results) {
  int counts[5] = {0, 0, 0, 0, 0};
  for (const CaseResult& result : results) ++counts[static_cast<int>(result.outcome)];
  const char* labels[] = {"PASSED", "FAILED", "ERRORED", "SKIPPED", "CRASHED"};
  for (int kind : {1, 2, 4}) {
    for (const CaseResult& result : results) {
      if (static_cast<int>(result.outcome) != kind) continue;
      std::printf("%-8s %-10s %-55s %s\n", labels[kind], backend.c_str(), result.name.c_str(),
                  result.detail.c_str());
    }
  }
  int through_binary = 0;
  std::vector<std::string> mismatches;
  for (size_t idx = 0; idx < results.size(); ++idx) {
    if (options.cli_every > 0 && idx % options.cli_every == 0 &&
        results[idx].outcome != Outcome::kSkipped) {
      ++through_binary;
    }
    if (!results[idx].cli_mismatch.empty()) {
      mismatches.push_back(results[idx].name + ": " + results[idx].cli_mismatch);
    }
  }
  for (const std::string& mismatch : mismatches) {
    std::printf("CLI MISMATCH %s %s\n", backend.c_str(), mismatch.c_str());
  }
  const int tensor_only = counts[0] + counts[1] + counts[2] + counts[4];
  std::printf(
      "\nONNX node conformance through convgate compare (%s, rtol 1e-3, atol 1e-7):\n"
      "  %zu cases: %d tensor-only, %d skipped (non-tensor values)\n"
      "  passed %d / failed %d / errored %d / crashed %d  (of %d tensor-only)\n"
      "  %d of them also through the binary: %zu disagreed\n",
      BackendTitle(backend).c_str(), results.size(), tensor_only, counts[3], counts[0], counts[1],
      counts[2], counts[4], tensor_only, through_binary, mismatches.size());
  return counts[4] == 0 && mismatches.empty() ? counts[0] : -1;
}

// The cases whose outcome differs between the first backend and each other one.
void ReportDifferences(const Options& options,
                       const std::vector<std::vector<CaseResult>>& by_backend) {
  for (size_t other = 1; other < by_backend.size(); ++other) {
    int differing = 0;
    for (size_t idx = 0; idx < by_backend[0].size(); ++idx) {
      const Outcome first = by_backend[0][idx].outcome;
      const Outcome second = by_backend[other][idx].outcome;
      if ((first == Outcome::kPassed) == (second == Outcome::kPassed)) continue;
      ++differing;
      std::printf("DIFFERS  %-55s %s %s, %s %s\n", by_backend[0][idx].name.c_str(),
                  options.backends[0].c_str(), first == Outcome::kPassed ? "passes" : "does not",
                  options.backends[other].c_str(),
                  second == Outcome::kPassed ? "passes" : "does not");
    }
    std::printf("%d cases pass on one of %s and %s but not the other\n", differing,
                options.backends[0].c_str(), options.backends[other].c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: node_conformance CONVGATE [--data DIR] [--min-pass N] [--jobs N] "
                 "[--filter SUBSTR] [--cli-every N] [--backends ort,openvino] [--stride N]\n");
    return 2;
  }
  const std::vector<fs::path> cases = ListCases(options);
  if (cases.empty()) {
    std::fprintf(stderr, "no test cases under %s (is libonnx-testdata installed?)\n",
                 options.data.c_str());
    return 1;
  }
  std::vector<std::vector<CaseResult>> by_backend;
  for (const std::string& backend : options.backends) {
    by_backend.push_back(RunAll(options, cases, backend));
  }
  bool ok = true;
  for (size_t idx = 0; idx < options.backends.size(); ++idx) {
    const int passed = Report(options, options.backends[idx], by_backend[idx]);
    if (passed < 0 || (idx == 0 && passed < options.min_pass)) ok = false;
  }
  if (options.min_pass > 0) {
    std::printf("required: >= %d passed on %s\n", options.min_pass, options.backends[0].c_str());
  }
  ReportDifferences(options, by_backend);
  return ok ? 0 : 1;
}
