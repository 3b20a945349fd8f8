// Flags shared by several subcommands, declared once (STYLE.md section 7): the input-generation
// and loading flags, the result-file flags, and the tolerance flags. Each Add* registers the
// flags with CLI11 (which generates --help); each To* validates the raw values before any model
// loads and returns InvalidArgument quoting the bad text.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/compare/policy.h"
#include "convgate/core/status.h"
#include "convgate/gate/workflows.h"

namespace convgate::cli {

struct DataFlags {
  uint64_t seed = 1;
  int samples = 1;
  std::vector<std::string> fill;
  std::vector<std::string> val_range;
  std::vector<std::string> shape;
  std::vector<std::string> dim;
  std::string load_inputs;
  std::string save_inputs;
  std::string save_outputs;
  int threads = 0;
};
void AddDataFlags(CLI::App& app, DataFlags& flags);
Result<gate::DataOptions> ToDataOptions(const DataFlags& flags);

struct OutputFlags {
  std::string out_dir;
  bool json = false;
  std::string color = "auto";
};
void AddOutputFlags(CLI::App& app, OutputFlags& flags);
// True when console text should carry ANSI colours (auto: stdout is a TTY and NO_COLOR unset).
bool UseColor(const OutputFlags& flags);

// The tolerance policy's flags (policy_flags.cc): each value "X" or "NAME:X", and --policy FILE.
struct ToleranceFlags {
  std::vector<std::string> atol;
  std::vector<std::string> rtol;
  std::vector<std::string> check_error_stat;
  std::vector<std::string> mismatch_ppm;
  std::vector<std::string> min_cosine;
  std::vector<std::string> min_snr_db;
  std::string policy_file;
};
void AddToleranceFlags(CLI::App& app, ToleranceFlags& flags);
// The policy file (if any) with the flags layered on top: a flag beats the file's value.
Result<compare::Policy> ToPolicy(const ToleranceFlags& flags);

}  // namespace convgate::cli
