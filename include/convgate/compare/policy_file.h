// The policy file (`--policy FILE.yaml`): every knob of policy.h in one YAML document.
//
//   atol: 1e-5
//   rtol: 1e-3
//   check_error_stat: elementwise   # or max | mean | median | p99 | p99.5 ...
//   mismatch_ppm: 0
//   min_cosine: 0.999
//   min_snr_db: 40
//   dtype_defaults: {float16: {atol: 1e-3, rtol: 1e-2}}
//   outputs:
//     logits: {atol: 1e-4, check_error_stat: p99}
//
// Every key is optional; an empty file is an empty policy. dtype_defaults takes float16, bfloat16,
// float32 and float64 (integers, bool and strings compare exactly), each with atol and/or rtol;
// outputs maps an output name to any of the six top-level knobs. Values are checked as the
// command-line flags check them (policy.h).
#pragma once

#include <filesystem>
#include <string_view>

#include "convgate/compare/policy.h"
#include "convgate/core/status.h"

namespace convgate::compare {

// Reads and parses `path`. InvalidArgument naming the file, the line, the key path and the value
// for a YAML syntax error, an unknown key, a value of the wrong type or out of range
// ("p.yaml: line 4: outputs.logits.atol: 'abc' is not a number"); also when the file cannot be
// read.
Result<Policy> ReadPolicyFile(const std::filesystem::path& path);

// The same on text already read; `file` names it in messages.
Result<Policy> ParsePolicyYaml(std::string_view text, std::string_view file);

}  // namespace convgate::compare
