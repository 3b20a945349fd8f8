// convgate's in-process API: gate a converted model from a C++ program, as `convgate compare` and
// `convgate verify` do, without a child process. The one installed header (cmake --install puts
// it in PREFIX/include/convgate; find_package(convgate) gives the target convgate::convgate).
//
// Version 1. Only what this header declares is the API: it uses the standard library alone, and
// libconvgate.so exports nothing else (the modules under include/convgate/<module>/ are the
// tool's internals and change without notice). A change that breaks a program written against
// this header gets a new namespace (convgate::v2) and a new CONVGATE_API_VERSION.
//
//   convgate::v1::CompareRequest request;
//   request.source = "model.onnx";
//   request.target = "model_fp16.onnx";
//   convgate::v1::Outcome outcome = convgate::v1::Compare(request);
//   if (!outcome.passed()) std::cerr << outcome.console_text;
//
// Calls never throw for a bad model or request: the outcome says what went wrong, with the exit
// code the command line would give. Make one call at a time per process: the gate was built for
// one workflow per process (batch runs jobs as child processes), and concurrent calls are not
// tested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#define CONVGATE_API_VERSION 1

namespace convgate::v1 {

// The samples both sides run on (the command line's data flags).
struct Inputs {
  int samples = 1;                      // --samples
  uint64_t seed = 1;                    // --seed
  std::map<std::string, int64_t> dims;  // --dim SYMBOL=VALUE
  std::string load_inputs;              // --load-inputs (.npz or ONNX test case); empty: generated
};

// Empty: the per-dtype defaults (and, for verify, the conversion's and the measured noise floor).
struct Tolerances {
  std::optional<double> atol;  // --atol
  std::optional<double> rtol;  // --rtol
};

struct CompareRequest {
  std::string source;  // a model file or folder, or saved outputs (.npz, an ONNX test case)
  std::string target;
  std::string source_backend;  // "onnxruntime", "openvino", "torch", ...; empty: by format
  std::string target_backend;
  Inputs inputs;
  Tolerances tolerances;
  std::string out_dir;  // not empty: report.json, verify_result.json and junit.xml written there
};

struct VerifyRequest {
  std::string source;
  // How the target is made: a conversion kind as `verify --to` takes it ("fp16", "opset:17",
  // "openvino", "optimum-onnx", ...), or `target`, a model already converted. Both empty: chosen
  // from the source as `verify` with no --to does.
  std::string to;
  std::string target;
  std::map<std::string, std::string> params;  // --param NAME=VALUE of the conversion
  bool use_cache = true;                      // false: --no-cache
  Inputs inputs;
  Tolerances tolerances;
  // Not empty: report.json, verify_result.json and junit.xml written there. The converted model
  // stays in the conversion cache (report.json's target names it), or a temporary folder without.
  std::string out_dir;
};

// One output of one sample, as the console table shows it.
struct Check {
  int sample = 0;
  std::string output;
  bool passed = false;
  // Absent when a side lacks the output.
  std::optional<double> max_abs_diff;
  std::optional<double> max_rel_diff;
  int64_t mismatches = 0;             // elements outside the tolerance
  std::vector<std::string> failures;  // why it failed, one sentence each
};

struct Outcome {
  // The command line's exit code: 0 passed, 1 a check failed, 2 the request is wrong, 3 a model
  // could not be loaded, converted or run, 4 an internal error.
  int exit_code = 4;
  std::string verdict;  // "pass", "fail" or "error"
  std::string error;    // exit 2-4: what stopped it ("load: model.onnx: ...")
  std::vector<Check> checks;
  std::string report_json;   // the document report.json holds
  std::string console_text;  // what the command prints
  bool passed() const { return exit_code == 0; }
};

Outcome Compare(const CompareRequest& request);
Outcome Verify(const VerifyRequest& request);

// "0.1.0 (0123456789ab)": the library's version and commit.
std::string Version();

}  // namespace convgate::v1
