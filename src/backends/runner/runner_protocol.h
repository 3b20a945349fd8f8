// The JSON lines a persistent runner (runner_model.h) and convgate exchange: the "openvino"
// backend's openvino_runner.py, whose docstring is the protocol's full statement, and the "hf"
// backend's hf_runner.py host. Pure functions of text, so they are tested without Python.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// What convgate allows a runner process, whoever owns it (runner_model.h, hf/hf_host.h).
// The end of its stderr is where its error is, and a chatty library must not grow the report.
inline constexpr size_t kRunnerMaxLogBytes = 64 * 1024;
// Time for a runner to exit once its stdin is closed (it is between requests, so it exits at
// once; OpenVINO's teardown takes ~0.1 s, transformers' less) before its group is killed.
inline constexpr double kRunnerExitGraceSeconds = 2.0;
// Writing a request line: a runner reads it at once unless it is busy, which it never is between
// requests; the bound only guards against one that stopped reading.
inline constexpr double kRunnerWriteTimeoutSeconds = 30.0;

// What the runner says once the model is compiled.
struct RunnerHello {
  std::string version;   // the runtime's, "2026.4.1-22982-..." (OpenVINO)
  std::string settings;  // "CPU, inference precision f32"
  Signature signature;   // dynamic dims are Dim::Unknown() (the protocol carries no symbols)
};

// The runner's start-up line. A failure response becomes its Status (code and message as the
// runner sent them); a line that is not the protocol is DataLoss quoting its start.
Result<RunnerHello> ParseRunnerHello(std::string_view line);

// A response to a request: OK, or the runner's Status.
Status ParseRunnerResponse(std::string_view line);

// {"op": "run", "inputs": ..., "outputs": ..., "names": [...]}.
std::string RunnerRunRequest(const std::filesystem::path& inputs,
                             const std::filesystem::path& outputs,
                             const std::vector<std::string>& names);

}  // namespace convgate::backends
