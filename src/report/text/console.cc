// The terminal summary: a table per check, then every failure with its hints, then the verdict.
#include <algorithm>
#include <set>
#include <string>

#include "convgate/core/numbers.h"
#include "convgate/core/units.h"
#include "convgate/report/conversion.h"
#include "convgate/report/report.h"
#include "report/agreement_report.h"
#include "report/benchmark_report.h"
#include "report/json/policy.h"
#include "report/per_node_report.h"
#include "report/text/policy.h"
#include "report/text/table.h"

namespace convgate::report {
namespace {

using internal::Paint;
using internal::Short;
using internal::Table;

std::string ShapeText(const std::vector<int64_t>& shape) { return FormatIndex(shape); }

std::string SideLine(const gate::SideRecord& side) {
  if (side.kind.empty()) return side.path;  // stopped before it could be identified
  std::string text = side.path + "  (" + side.kind;
  if (side.kind == "model") text += ", " + side.backend + " " + side.backend_version;
  if (!side.backend_settings.empty()) text += ", " + side.backend_settings;
  if (side.kind == "outputs") text += ", " + side.format;
  text += ")";
  for (const std::string& note : side.notes) text += "\n           note: " + note;
  return text;
}

std::string InputsLine(const gate::DatasetRecord& inputs, bool both_saved) {
  if (inputs.origin.empty()) return both_saved ? "none (both sides are saved outputs)" : "-";
  std::string text = inputs.origin;
  for (const gate::InputRecord& input : inputs.tensors) {
    text += "\n           " + input.name + " " + input.dtype + ShapeText(input.shape);
  }
  return text;
}

std::string Notes(const gate::DatasetRecord& inputs) {
  std::string text;
  for (const std::string& note : inputs.notes) text += "  note: " + note + "\n";
  if (!inputs.saved_to.empty()) text += "  inputs saved to " + inputs.saved_to + "\n";
  return text;
}

std::string Verdict(gate::Verdict verdict, bool color) {
  switch (verdict) {
    case gate::Verdict::kPass:
      return Paint("PASS", internal::kGreen, color);
    case gate::Verdict::kFail:
      return Paint("FAIL", internal::kRed, color);
    case gate::Verdict::kError:
      return Paint("ERROR", internal::kYellow, color);
  }
  return "ERROR";
}

// The error itself goes to stderr (cli::Finish); the table ends by saying where the run stopped.
std::string ErrorVerdict(const std::optional<gate::GateError>& error, bool color) {
  return Paint("ERROR", internal::kYellow, color) + ": stopped at the " +
         std::string(gate::StageName(error->stage)) + " stage, so no verdict (exit " +
         std::to_string(ToInt(gate::ExitCodeFor(gate::Verdict::kError, error))) + ")\n";
}

std::string PolicyLine(const compare::Policy& policy) {
  return internal::PolicySummaryText(policy);
}

// "0", "12/1000", or "10-14/1000" when recounted from histograms (`convgate check`).
std::string MismatchText(const compare::Bracket<int64_t>& mismatches, int64_t elements) {
  if (mismatches.hi == 0) return "0";
  std::string count = std::to_string(mismatches.lo);
  if (!mismatches.exact()) count += "-" + std::to_string(mismatches.hi);
  return count + "/" + std::to_string(elements);
}

// "3.1x", or "-" for an output without a measured floor above zero.
std::string FloorMultipleText(const std::optional<double>& multiple) {
  return multiple ? Short(*multiple) + "x" : "-";
}

// max|diff| where the target introduced NaN or Inf: |t - s| is NaN or Inf there, so the finite
// pairs' largest error (0 when there are none) must not stand for the output's. "nan" when any
// introduced element is NaN, else "inf"; "" when the target introduced none.
std::string IntroducedNonFinite(const compare::NonFiniteSplit& split) {
  if (split.introduced_nan > 0) return "nan";
  if (split.introduced_inf > 0) return "inf";
  return "";
}

std::vector<std::string> CompareRow(const gate::OutputCheck& check, bool calibrated) {
  std::vector<std::string> row{std::to_string(check.sample), check.output};
  if (!check.comparison) {
    row.insert(row.end(), {"-", "-", "-", "-", "-"});
    if (calibrated) row.push_back("-");
    row.insert(row.end(), {"-", "missing"});
  } else {
    const compare::TensorComparison& cmp = *check.comparison;
    row.push_back(cmp.target_desc);
    // No numeric statistics exist when nothing numeric was compared (strings, all non-finite).
    const bool numeric = cmp.errors.compared > 0;
    const std::string introduced = IntroducedNonFinite(cmp.non_finite);
    row.push_back(!introduced.empty() ? introduced
                  : numeric           ? Short(cmp.errors.max_abs_error)
                                      : "-");
    row.push_back(numeric ? Short(cmp.errors.mean_abs_error) : "-");
    row.push_back(numeric ? Short(cmp.errors.abs_error_percentiles[3]) : "-");  // p99
    row.push_back(numeric ? Short(cmp.errors.max_rel_error) : "-");
    if (calibrated) row.push_back(FloorMultipleText(check.floor_multiple));
    row.push_back(MismatchText(check.mismatches, cmp.num_elements));
  }
  row.push_back(check.passed ? "PASS" : "FAIL");
  return row;
}

// Columns that only a calibrated comparison has.
bool Calibrated(const gate::CompareReport& report) { return !report.policy.noise_floors.empty(); }

// Per-sample rows up to this many samples; beyond it, one row per output aggregated over samples
// (the report files keep every sample).
constexpr int kMaxSampleRows = 4;
// Failing checks explained in full; the rest are counted (report.json has them all).
constexpr size_t kMaxDetailedFailures = 6;

// The target's description of an output (from its first compared sample), or "-".
std::string TargetDesc(const gate::CompareReport& report, const std::string& output) {
  for (const gate::OutputCheck& check : report.checks) {
    if (check.output == output && check.comparison) return check.comparison->target_desc;
  }
  return "-";
}

// The largest multiple of its noise floor an output's error reached over the samples.
std::optional<double> WorstFloorMultiple(const gate::CompareReport& report,
                                         const std::string& output) {
  std::optional<double> worst;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.output != output || !check.floor_multiple) continue;
    worst = std::max(worst.value_or(0.0), *check.floor_multiple);
  }
  return worst;
}

// The aggregate row's max|diff|: "nan" or "inf" (IntroducedNonFinite) when a sample's target
// introduced one, "-" when no sample had a finite pair, else the largest |diff|.
std::string AggregateMaxDiff(const gate::CompareReport& report, const gate::OutputAggregate& row,
                             bool numeric) {
  std::string introduced;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.output != row.output || !check.comparison) continue;
    const std::string kind = IntroducedNonFinite(check.comparison->non_finite);
    if (introduced != "nan" && !kind.empty()) introduced = kind;
  }
  if (!introduced.empty()) return introduced;
  return numeric ? Short(row.max_abs_error) : "-";
}

// Whether any sample of the output had a finite element pair (else its statistics are all 0).
bool AnyFinitePair(const gate::CompareReport& report, const std::string& output) {
  return std::any_of(report.checks.begin(), report.checks.end(), [&](const auto& check) {
    return check.output == output && check.comparison && check.comparison->errors.compared > 0;
  });
}

std::string AggregateTable(const gate::CompareReport& report, bool color) {
  const bool calibrated = Calibrated(report);
  std::vector<std::string> header{"output",       "target",     "samples", "max|diff|",
                                  "worst sample", "mean|diff|", "max rel"};
  if (calibrated) header.push_back("x floor");
  header.insert(header.end(), {"mismatches", "failed samples", "first failing"});
  Table table(header);
  for (const gate::OutputAggregate& row : report.aggregates) {
    const bool numeric = AnyFinitePair(report, row.output);
    std::vector<std::string> cells{row.output,
                                   TargetDesc(report, row.output),
                                   std::to_string(row.samples),
                                   AggregateMaxDiff(report, row, numeric),
                                   row.worst_sample < 0 ? "-" : std::to_string(row.worst_sample),
                                   numeric ? Short(row.mean_abs_error) : "-",
                                   numeric ? Short(row.max_rel_error) : "-"};
    if (calibrated) cells.push_back(FloorMultipleText(WorstFloorMultiple(report, row.output)));
    cells.insert(
        cells.end(),
        {row.mismatches == 0 ? "0"
                             : std::to_string(row.mismatches) + "/" + std::to_string(row.elements),
         std::to_string(row.failed_samples) + "/" + std::to_string(row.samples),
         row.first_failing_sample < 0 ? "-"
                                      : "sample " + std::to_string(row.first_failing_sample)});
    table.AddRow(cells, row.failed_samples == 0 ? "" : internal::kRed);
  }
  return table.Render(color);
}

// "  floor    measured in 0.06 s on 2 samples (ONNX Runtime optimization disabled vs extended,
// ...); an atol nobody set is max(its default, 8 x floor)", then each output's floor and atol.
std::string CalibrationLines(const gate::CompareReport& report) {
  if (!report.calibration) return "";
  const gate::CalibrationRecord& record = *report.calibration;
  if (record.status == "skipped") return "  floor    not measured: " + record.detail + "\n";
  std::string text = "  floor    " +
                     (record.status == "cached" ? std::string("cached (measured earlier)")
                                                : "measured in " + FormatSeconds(record.seconds)) +
                     " on " + std::to_string(record.samples) +
                     (record.samples == 1 ? " sample" : " samples") + " (" + record.basis +
                     "); an atol nobody set is max(its default, " + Short(record.factor) +
                     " x floor)\n";
  std::string floors;
  for (const auto& [name, floor] : report.policy.noise_floors) {
    const compare::OutputPolicy policy = report.policy.For(name);
    const bool raised = policy.atol_origin.find("x the noise floor") != std::string::npos;
    floors += (floors.empty() ? "" : "; ") + name + " " + Short(floor.max_abs) + " -> atol " +
              Short(policy.atol) + (raised ? " (" + Short(record.factor) + " x floor)" : " (kept)");
  }
  if (!floors.empty()) text += "           " + floors + "\n";
  return text;
}

// Warnings about the inputs, and each output whose cosine and SNR are undefined (once each).
std::string ObservationLines(const gate::CompareReport& report) {
  std::string text;
  for (const std::string& warning : report.warnings) text += "warning: " + warning + "\n";
  std::set<std::string> told;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.floors_undefined.empty() || !told.insert(check.output).second) continue;
    text += "note: output '" + check.output + "', sample " + std::to_string(check.sample) + ": " +
            check.floors_undefined + " (min_cosine and min_snr_db never fail it)\n";
  }
  return text;
}

std::string SampleTable(const gate::CompareReport& report, bool color) {
  const bool calibrated = Calibrated(report);
  std::vector<std::string> header{"sample",     "output",    "target", "max|diff|",
                                  "mean|diff|", "p99|diff|", "max rel"};
  if (calibrated) header.push_back("x floor");
  header.insert(header.end(), {"mismatches", "verdict"});
  Table table(header);
  for (const gate::OutputCheck& check : report.checks) {
    table.AddRow(CompareRow(check, calibrated), check.passed ? "" : internal::kRed);
  }
  return table.Render(color);
}

std::string RunSampleTable(const gate::RunReport& report, bool color) {
  Table table(
      {"sample", "output", "dtype", "shape", "declared", "min", "max", "NaN", "Inf", "verdict"});
  for (const gate::SanityCheck& check : report.checks) {
    table.AddRow({std::to_string(check.sample), check.output, check.dtype, ShapeText(check.shape),
                  check.declared_dtype + check.declared_shape, Short(check.values.min),
                  Short(check.values.max), std::to_string(check.values.nan),
                  std::to_string(check.values.pos_inf + check.values.neg_inf),
                  check.passed ? "PASS" : "FAIL"},
                 check.passed ? "" : internal::kRed);
  }
  return table.Render(color);
}

std::string RunAggregateTable(const gate::RunReport& report, bool color) {
  struct Row {
    std::string output, dtype, declared;
    double min = 0.0, max = 0.0;
    int64_t nan = 0, inf = 0;
    int samples = 0, failed = 0;
  };
  std::vector<Row> rows;
  for (const gate::SanityCheck& check : report.checks) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const Row& row) { return row.output == check.output; });
    if (it == rows.end()) {
      it = rows.insert(rows.end(),
                       Row{check.output, check.dtype, check.declared_dtype + check.declared_shape,
                           check.values.min, check.values.max});
    }
    it->min = std::min(it->min, check.values.min);
    it->max = std::max(it->max, check.values.max);
    it->nan += check.values.nan;
    it->inf += check.values.pos_inf + check.values.neg_inf;
    ++it->samples;
    it->failed += check.passed ? 0 : 1;
  }
  Table table(
      {"output", "dtype", "declared", "samples", "min", "max", "NaN", "Inf", "failed samples"});
  for (const Row& row : rows) {
    table.AddRow({row.output, row.dtype, row.declared, std::to_string(row.samples), Short(row.min),
                  Short(row.max), std::to_string(row.nan), std::to_string(row.inf),
                  std::to_string(row.failed) + "/" + std::to_string(row.samples)},
                 row.failed == 0 ? "" : internal::kRed);
  }
  return table.Render(color);
}

std::string MoreFailures(size_t failed) {
  if (failed <= kMaxDetailedFailures) return "";
  return "... and " + std::to_string(failed - kMaxDetailedFailures) +
         " more failing checks (every one is in report.json: --out DIR or --json)\n";
}

}  // namespace

std::string ConsoleText(const gate::RunReport& report, bool color) {
  std::string out = Paint("convgate run", internal::kBold, color) + "\n";
  out += "  model    " + SideLine(report.model) + "\n";
  out += "  inputs   " + InputsLine(report.inputs, false) + "\n" + Notes(report.inputs);
  if (!report.model.outputs_saved_to.empty()) {
    out += "  outputs saved to " + report.model.outputs_saved_to + "\n";
  }
  for (const std::string& binding : report.bindings) out += "  bound    " + binding + "\n";
  out += "\n";
  if (report.inputs.samples > kMaxSampleRows) {
    out += RunAggregateTable(report, color) + "\n";
  } else if (!report.checks.empty()) {
    out += RunSampleTable(report, color) + "\n";
  }
  size_t failed = 0;
  for (const gate::SanityCheck& check : report.checks) {
    if (check.passed) continue;
    if (++failed > kMaxDetailedFailures) continue;
    out += "sample " + std::to_string(check.sample) + ", output '" + check.output + "':\n";
    for (const std::string& failure : check.failures) out += "  - " + failure + "\n";
  }
  out += MoreFailures(failed);
  for (const std::string& failure : report.structure_failures) out += failure + "\n";
  if (report.error) return out + ErrorVerdict(report.error, color);
  if (report.checks.empty()) return out + Verdict(report.verdict, color) + ": no output checked\n";
  out += Verdict(report.verdict, color) + ": " + std::to_string(report.checks.size() - failed) +
         " of " + std::to_string(report.checks.size()) + " output checks passed over " +
         std::to_string(report.inputs.samples) + " sample(s)\n";
  return out;
}

std::string ConsoleText(const gate::CompareReport& report, bool color) {
  const char* title = report.rejudged_from.empty() ? "convgate compare" : "convgate check";
  std::string out = Paint(title, internal::kBold, color) + "\n";
  out += "  source   " + SideLine(report.source) + "\n";
  out += "  target   " + SideLine(report.target) + "\n";
  const bool both_saved = report.source.kind == "outputs" && report.target.kind == "outputs";
  out += "  inputs   " + InputsLine(report.inputs, both_saved) + "\n" + Notes(report.inputs);
  if (!report.source.outputs_saved_to.empty()) {
    out += "  source outputs saved to " + report.source.outputs_saved_to + "\n";
  }
  out += "  policy   " + PolicyLine(report.policy) + "\n";
  out += CalibrationLines(report);
  if (!report.rejudged_from.empty()) {
    out += "  re-judged from " + report.rejudged_from + " (nothing re-run)\n";
  }
  out += "\n";
  if (!report.checks.empty()) {
    out += (report.inputs.samples > kMaxSampleRows ? AggregateTable(report, color)
                                                   : SampleTable(report, color)) +
           "\n";
  }
  out += ObservationLines(report);
  out += internal::AgreementSection(report, color);
  out += internal::PerNodeSection(report, color);
  for (const std::string& failure : report.structure_failures) {
    out += "structure: " + failure + "\n";
  }
  size_t failed = 0;
  std::set<std::string> hints_given;
  for (const gate::OutputCheck& check : report.checks) {
    if (check.passed) continue;
    if (++failed > kMaxDetailedFailures) continue;
    out += "sample " + std::to_string(check.sample) + ", output '" + check.output + "':\n";
    for (const std::string& failure : check.failures) out += "  - " + failure + "\n";
    for (const std::string& hint : check.hints) {
      // The same advice for every sample of an output is given once.
      if (hints_given.insert(hint).second) out += "  hint: " + hint + "\n";
    }
  }
  out += MoreFailures(failed);
  if (report.benchmark) out += "\n" + internal::BenchmarkSection(*report.benchmark, color) + "\n";
  if (report.error) return out + ErrorVerdict(report.error, color);
  if (report.checks.empty()) {
    out += Verdict(report.verdict, color) + ": no output compared";
  } else {
    out += Verdict(report.verdict, color) + ": " + std::to_string(report.checks.size() - failed) +
           " of " + std::to_string(report.checks.size()) + " output checks passed";
  }
  if (const gate::OutputCheck* first = report.FirstFailure()) {
    out += "; first failure: sample " + std::to_string(first->sample) + ", output '" +
           first->output + "'";
  }
  if (!report.structure_failures.empty()) {
    out += "; " + std::to_string(report.structure_failures.size()) + " structure failure(s)";
  }
  out += internal::AgreementVerdictSuffix(report);
  if (report.benchmark && report.benchmark->speed && !report.benchmark->speed->passed) {
    out += "; the speed gate failed";
  }
  if (report.per_node && report.per_node->gate_failed) {
    const gate::PerNodeSummary& summary = report.per_node->summary;
    out += report.per_node->nodes.empty()
               ? "; no intermediate compared (--strict)"
               : "; " + std::to_string(summary.failed + summary.errored) +
                     " intermediate failure(s) (--strict)";
  }
  return out + "\n";
}

std::string ConsoleText(const gate::BenchReport& report, bool color) {
  std::string out = Paint("convgate bench", internal::kBold, color) + "\n";
  const std::string first = report.target ? "source" : "model";
  out += "  " + first + std::string(9 - first.size(), ' ') + SideLine(report.source) + "\n";
  if (report.target) out += "  target   " + SideLine(*report.target) + "\n";
  out += "  inputs   " + InputsLine(report.inputs, false) + "\n" + Notes(report.inputs) + "\n";
  if (!report.benchmark.sides.empty()) {
    out += internal::BenchmarkSection(report.benchmark, color);
  }
  if (report.error) return out + ErrorVerdict(report.error, color);
  out += Verdict(report.verdict, color) + ": ";
  if (!report.benchmark.speed) {
    return out + "measured " + report.source.path + " (no speed gate: one model)\n";
  }
  out += "the target is " + bench::DescribeSpeedup(*report.benchmark.speed);
  if (!report.benchmark.speed->gate.any()) out += " (no speed gate set)";
  return out + "\n";
}

std::string ConsoleText(const gate::VerifyReport& report, bool color) {
  std::string out = internal::Paint("convgate verify", internal::kBold, color) + "\n";
  out += "  source      " + report.source + "\n";
  const std::string conversion =
      report.conversion_detail.empty() ? report.conversion_path : report.conversion_detail;
  out += "  conversion  " + (conversion.empty() ? std::string("(not reached)") : conversion) + "\n";
  // A chosen path that took more than one attempt says what each did.
  if (report.path_attempts.size() > 1) {
    for (const std::string& attempt : report.path_attempts) {
      out += "              tried: " + attempt + "\n";
    }
  } else if (report.path_attempts.size() == 1) {
    out += "              chosen: " + report.path_attempts.front() + "\n";
  }
  if (report.conversion) {
    const convert::ConversionRecord& record = *report.conversion;
    // A refused or failed conversion converted nothing: its error says why, below.
    if (record.error == convert::ConversionError::kNone) {
      out += "              " +
             (record.cache_hit ? std::string("cache hit")
                               : "converted in " + FormatSeconds(record.seconds)) +
             (record.output_path.empty() ? "" : " -> " + record.output_path) + "\n";
    }
    for (const std::string& note : record.notes) out += "              note: " + note + "\n";
  }
  out += "  task        " +
         (report.task ? report.task->task + " (" + report.task->evidence + ")" : "not detected") +
         "\n\n";
  if (report.e2e) out += "end-to-end on the target:\n" + ConsoleText(*report.e2e, color) + "\n";
  if (report.comparison) {
    out += "target against the source:\n" + ConsoleText(*report.comparison, color) + "\n";
  }
  const std::string verdict =
      report.verdict == gate::Verdict::kPass
          ? internal::Paint("VERIFY PASSED", internal::kGreen, color)
          : internal::Paint(
                report.verdict == gate::Verdict::kFail ? "VERIFY FAILED" : "VERIFY ERROR",
                report.verdict == gate::Verdict::kFail ? internal::kRed : internal::kYellow, color);
  if (report.error && report.error->stage == gate::Stage::kFlags) {
    return out + verdict + ": usage error, nothing ran\n";
  }
  // Stopped before any conversion ran (the source did not load, its inputs could not be made):
  // "conversion failed" would blame the converter for the source's problem.
  if (report.error && !report.conversion_passed && !report.conversion &&
      report.error->stage != gate::Stage::kConvert) {
    return out + verdict + ": stopped at the " + std::string(gate::StageName(report.error->stage)) +
           " stage before converting, so nothing was converted (the error says why)\n";
  }
  out += verdict + ": conversion " + (report.conversion_passed ? "ok" : "failed") +
         ", end-to-end " + (report.e2e_passed() ? "ok" : (report.e2e ? "failed" : "not run")) +
         ", comparison " +
         (report.comparison ? std::string(gate::VerdictName(report.comparison->verdict))
                            : std::string("not run")) +
         "\n";
  return out;
}

std::string ConsoleText(const gate::ReduceReport& report, bool color) {
  std::string out = ConsoleText(report.comparison, color) + "\n";
  out += internal::Paint("convgate reduce", internal::kBold, color) + "\n";
  const gate::NodeCheck* node = internal::ReducedNode(report);
  if (node != nullptr) {
    out += "  node     " + internal::NodeLabel(*node) + "\n";
    out += "  why      " + report.reason + "\n";
    out += "  sample   " + std::to_string(report.sample) + "\n";
  }
  if (!report.files.empty()) {
    out += "  folder   " + report.out_dir.string() + "/  (";
    for (size_t idx = 0; idx < report.files.size(); ++idx) {
      out += (idx ? ", " : "") + report.files[idx];
    }
    out += ")\n";
    out += "  command  " + report.command + "\n";
  }
  for (const std::string& note : report.notes) out += "  note: " + note + "\n";
  if (report.error) return out;
  const bool pass = report.verdict == gate::Verdict::kPass;
  out += internal::Paint(pass ? "REDUCED" : "NOT REDUCED", pass ? internal::kGreen : internal::kRed,
                         color);
  if (pass) {
    out += ": the one-node reproducer fails on its own (run repro.sh in the folder)\n";
  } else if (!report.files.empty()) {
    out += ": the node alone does not reproduce the failure\n";
  } else if (node != nullptr) {
    out += ": the node passes in the whole model, nothing to reduce there\n";
  } else {
    out += ": nothing to reduce\n";
  }
  return out;
}

namespace internal {

std::string PolicySummaryText(const compare::Policy& policy) {
  const compare::OutputPolicy global = policy.For("");
  std::string text = "|t - s| <= atol + rtol * |s|, " +
                     compare::ErrorStatName(global.check_error_stat) + ", atol " +
                     Setting(global.atol) + ", rtol " + Setting(global.rtol);
  if (!policy.global.atol || !policy.global.rtol) {
    // Where the values nobody set come from: the pair's policy (gate/pair_policy.h) or the dtype.
    text += policy.conversion_defaults
                ? " (where unset: " + policy.conversion_defaults->origin + ")"
                : " (per-dtype defaults where unset)";
  }
  if (!policy.global.atol && !policy.noise_floors.empty()) {
    text += ", atol raised to " + FormatShortest(compare::kNoiseFloorFactor) +
            " x each output's noise floor where larger";
  }
  if (global.mismatch_ppm > 0) text += ", mismatch_ppm " + Setting(global.mismatch_ppm);
  if (global.min_cosine) text += ", min_cosine " + Setting(*global.min_cosine);
  if (global.min_snr_db) text += ", min_snr_db " + Setting(*global.min_snr_db);
  text += "; integers, bool and strings exact";
  const auto knobs = [](const compare::PolicySettings& settings) {
    std::string listed;
    const nlohmann::json set = PolicySettingsJson(settings);
    for (const auto& [knob, value] : set.items()) {
      listed += (listed.empty() ? "" : ", ") + knob + " " +
                (value.is_string() ? value.get<std::string>() : Setting(value.get<double>()));
    }
    return listed.empty() ? std::string("exact") : listed;
  };
  if (policy.conversion_defaults) {
    // The profile's own rule for an output (the weight-compression profile's token_ids).
    for (const auto& [name, settings] : policy.conversion_defaults->per_output) {
      if (!policy.per_output.contains(name)) text += "; " + name + " (profile): " + knobs(settings);
    }
  }
  for (const auto& [name, settings] : policy.per_output) {
    text += "; " + name + ": " + knobs(settings);
  }
  return text;
}

}  // namespace internal

}  // namespace convgate::report
