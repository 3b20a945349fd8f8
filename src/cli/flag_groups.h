// The groups of flags commands compose, each declared once (flag.h). Every Add*Flags adds its
// flags to a FlagSet, bound to the options struct they fill; defaults shown in --help are read from
// that struct as constructed, so the help and the behaviour cannot disagree.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/flag.h"
#include "convgate/compare/agreement_check.h"
#include "convgate/compare/policy.h"
#include "convgate/convert/convert.h"
#include "convgate/core/limits.h"
#include "convgate/gate/per_node.h"
#include "convgate/gate/workflows.h"
#include "convgate/pipeline/pipeline.h"

namespace convgate::cli {

// Inputs and how samples run: --seed, --samples, --fill, --val-range, --shape (--input-shapes),
// --dim, --load-inputs, --save-inputs, --save-outputs, --threads. Refuses generation flags given
// with --load-inputs (the file decides the inputs).
void AddDataFlags(FlagSet& flags, gate::DataOptions& options);
// --map, --target-layout, --outputs, --exclude-outputs (compare, verify).
void AddInterfaceFlags(FlagSet& flags, session::InterfaceOptions& options);
// --min-coverage (compare, verify): gate::CompareOptions::min_coverage.
void AddCoverageFlag(FlagSet& flags, bool& min_coverage);

// The tolerance policy: --policy FILE first, then --atol, --rtol, --check-error-stat,
// --mismatch-ppm, --min-cosine, --min-snr-db layered on top of the file.
void AddToleranceFlags(FlagSet& flags, compare::Policy& policy);

enum class CalibrationUse {
  kOptIn,   // compare: --calibrate turns it on
  kOptOut,  // verify: on by default, --no-calibrate turns it off
};
// The noise floor (compare/noise_floor.h): --calibrate or --no-calibrate, and
// --no-calibration-cache.
void AddCalibrationFlags(FlagSet& flags, gate::CompareOptions::Calibration& options,
                         CalibrationUse use);

// Classifier agreement: --classifier, --agreement, --flip-margin, --top-k.
void AddAgreementFlags(FlagSet& flags, compare::AgreementConfig& config);

enum class BenchmarkUse {
  kCommand,   // bench: always benchmarks
  kOptional,  // compare, verify: --benchmark turns it on; the other flags need it
};
// --benchmark, --warmup, --iterations, --bench-time, --streams, --min-speedup, --max-slowdown,
// --cpus, --source-cpus, --target-cpus (gate/bench.h).
void AddBenchmarkFlags(FlagSet& flags, gate::BenchmarkOptions& options, BenchmarkUse use);

enum class LimitUse {
  kRuns,   // run, compare, verify, reduce, transform --validate: every limit
  kFiles,  // inspect: --max-tensor-bytes and --max-run-bytes (what a file may hold)
};
// --max-tensor-bytes, --max-run-bytes, --run-timeout (core/limits.h). Defaults from `limits` as
// constructed: half of usable memory and 600 s.
void AddLimitFlags(FlagSet& flags, Limits& limits, LimitUse use);

enum class PerNodeUse {
  kOptional,  // compare, verify, transform: --per-node turns it on; --strict,
              // --memory-budget and --local-error need it
  kAlways,    // reduce: always per-node; only --memory-budget and --local-error
  kPipeline,  // pipeline: --strict gates on every node, --per-node looks inside failing ones
};
void AddPerNodeFlags(FlagSet& flags, gate::PerNodeOptions& options, PerNodeUse use);

enum class PipelineUse {
  kSpec,      // pipeline: --steps, --set, --to, --describe
  kFeedback,  // compare: --feedback into `feedback`, and --steps and --set, which need it
};
// Steps and values of a pipeline run. --samples N stands for --steps N (refused beside it).
void AddPipelineFlags(FlagSet& flags, pipeline::PipelineOptions& options, PipelineUse use,
                      std::vector<std::string>* feedback = nullptr);

// What runs a model: per side, --{role}-backend and --{role}-exec ("--backend" and "--exec" when
// the role is empty), and one --exec-timeout for every side. A command implies backend exec.
struct SideFlagTarget {
  std::string role;  // "" (run), "source", "target"
  std::string* backend;
  gate::ExecOptions* exec;
};
void AddSideFlags(FlagSet& flags, std::vector<SideFlagTarget> sides);

enum class ConversionUse {
  kConvert,  // convert: --to is required (or --converter), -o is required
  kVerify,   // verify: --to may also be "opencv"; the command checks it has one target
};
// --to, --param, --converter, -o/--output, --timeout, --retries, --backoff, --cache-dir,
// --no-cache. --param keys are checked against the kind's parameters before anything converts.
void AddConversionFlags(FlagSet& flags, convert::ConversionRequest& request, ConversionUse use);
// --param KEY=VALUE (repeatable) into request.params; a key given twice is refused.
Flag ParamFlag(convert::ConversionRequest& request);
// Every kind's parameters with their defaults, for the help of the commands that convert.
std::string ConversionParamsHelp();

// How results are shown and written.
// A single gate's results store: --store URL (record the gate as a run of one job) and --id
// (the entry id in the store; default the model's file name). Filled by the command: what to
// record as the model and the conversion.
struct GateStoreOptions {
  std::string location;
  std::string id;
  std::string model;
  std::string conversion;
  std::map<std::string, std::string> conversion_params;
  std::string model_type;  // --model-type
};
void AddGateStoreFlags(FlagSet& flags, GateStoreOptions& options);

struct OutputOptions {
  std::string out_dir;  // --out: report.json, verify_result.json, junit.xml
  bool json = false;    // --json: report.json on stdout instead of the table
  bool pretty = false;  // --pretty: indent JSON (compact by default: reports get large)
  std::string color = "auto";
  std::string html;      // --html FILE: the HTML report (report/html.h)
  std::string markdown;  // --markdown FILE: the Markdown summary
  bool quiet = false;    // --quiet: no progress on stderr
};
enum class OutputUse {
  kGate,    // --out, --html, --markdown, --json, --pretty, --color
  kReport,  // --json, --pretty, --color (reduce: its -o folder holds the reports)
  kJson,    // --json, --pretty (inspect, convert, cache)
};
void AddOutputFlags(FlagSet& flags, OutputOptions& options, OutputUse use);
// True when console text should carry ANSI colours (auto: stdout is a TTY and NO_COLOR unset).
bool UseColor(const OutputOptions& options);
// JSON text as --pretty asks: indented, or compact. Never throws (report::DumpJson: bytes that are
// not UTF-8 are escaped and listed).
std::string DumpJson(const nlohmann::json& json, const OutputOptions& options);
// Writes `text` to `path` (atomically), creating its folder first.
Status WriteText(const std::string& path, const std::string& text);
// The HTML page and the Markdown summary of `reports` (report/html.h) written to `html` and
// `markdown` (either may be empty: not asked for), each failure reported on stderr; the paths
// written are appended to `written`. False when one could not be written.
bool WritePages(const std::string& html, const std::string& markdown,
                const std::vector<nlohmann::json>& reports, std::vector<std::string>& written);
// Text for stdout or stderr: EscapeForDisplay (core/utf8.h) on everything but the colour codes
// (ESC [ digits m) the tables paint with. A name, path or runner's stderr holding invalid UTF-8,
// ESC or \r then shows as \xNN instead of garbling the line or driving the terminal.
std::string ForTerminal(std::string_view text);

}  // namespace convgate::cli
