// Conformance: every ONNX backend node test case from libonnx-testdata through the real binary,
//   convgate compare <case folder (inputs + expected outputs)> <case>/model.onnx
// with ONNX Runtime, at rtol 1e-3 / atol 1e-7. Prints real counts and every case that did not
// pass. Exit status: 1 if fewer than --min-pass cases pass or if convgate ever crashed.
//
//   node_conformance CONVGATE_BINARY [--data DIR] [--min-pass N] [--jobs N] [--filter SUBSTR]
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

#include "testing/subprocess.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string binary;
  fs::path data = "/usr/share/libonnx-testdata/data/node";
  int min_pass = 0;
  int jobs = 2;
  std::string filter;
};

enum class Outcome { kPassed, kFailed, kErrored, kSkipped, kCrashed };

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::kErrored;
  std::string detail;  // first line of the failure or error
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

std::string FirstLine(const std::string& text, const std::string& marker) {
  size_t pos = marker.empty() ? std::string::npos : text.find(marker);
  if (pos == std::string::npos) pos = 0;
  size_t end = text.find('\n', pos);
  std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (line.size() > 220) line = line.substr(0, 217) + "...";
  return line;
}

CaseResult RunCase(const Options& options, const fs::path& case_dir) {
  CaseResult result;
  result.name = case_dir.filename().string();
  std::string why;
  if (!IsTensorOnly(case_dir / "model.onnx", why)) {
    result.outcome = Outcome::kSkipped;
    result.detail = why;
    return result;
  }
  convgate::testing::ProcessResult run = convgate::testing::RunProcess(
      {options.binary, "compare", case_dir.string(), (case_dir / "model.onnx").string(), "--rtol",
       "1e-3", "--atol", "1e-7", "--threads", "1", "--color", "never"});
  if (run.signal != 0) {
    result.outcome = Outcome::kCrashed;
    result.detail = "killed by signal " + std::to_string(run.signal);
  } else if (run.exit_code == 0) {
    result.outcome = Outcome::kPassed;
  } else if (run.exit_code == 1) {
    result.outcome = Outcome::kFailed;
    result.detail = FirstLine(run.out, "  - ");
  } else {
    result.outcome = Outcome::kErrored;
    result.detail = "exit " + std::to_string(run.exit_code) + ": " + FirstLine(run.err, "");
  }
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
  return cases;
}

std::vector<CaseResult> RunAll(const Options& options, const std::vector<fs::path>& cases) {
  std::vector<CaseResult> results(cases.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int job = 0; job < options.jobs; ++job) {
    workers.emplace_back([&] {
      for (size_t idx = next++; idx < cases.size(); idx = next++) {
        results[idx] = RunCase(options, cases[idx]);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return results;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: node_conformance CONVGATE [--data DIR] [--min-pass N] [--jobs N] "
                 "[--filter SUBSTR]\n");
    return 2;
  }
  const std::vector<fs::path> cases = ListCases(options);
  if (cases.empty()) {
    std::fprintf(stderr, "no test cases under %s (is libonnx-testdata installed?)\n",
                 options.data.c_str());
    return 1;
  }
  const std::vector<CaseResult> results = RunAll(options, cases);
  int counts[5] = {0, 0, 0, 0, 0};
  for (const CaseResult& result : results) ++counts[static_cast<int>(result.outcome)];
  const char* labels[] = {"PASSED", "FAILED", "ERRORED", "SKIPPED", "CRASHED"};
  for (int kind : {1, 2, 4}) {
    for (const CaseResult& result : results) {
      if (static_cast<int>(result.outcome) != kind) continue;
      std::printf("%-8s %-55s %s\n", labels[kind], result.name.c_str(), result.detail.c_str());
    }
  }
  const int tensor_only = counts[0] + counts[1] + counts[2] + counts[4];
  std::printf(
      "\nONNX node conformance through convgate compare (ONNX Runtime, rtol 1e-3, atol 1e-7):\n"
      "  %zu cases: %d tensor-only, %d skipped (non-tensor values)\n"
      "  passed %d / failed %d / errored %d / crashed %d  (of %d tensor-only; required >= %d)\n",
      results.size(), tensor_only, counts[3], counts[0], counts[1], counts[2], counts[4],
      tensor_only, options.min_pass);
  return (counts[0] >= options.min_pass && counts[4] == 0) ? 0 : 1;
}
