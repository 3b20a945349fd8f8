// What a finished job left in its folder, read back for the store: report.json through report's
// reader (report/read_report.h ParseReport, the descriptions it was written with), giving each
// output's figures, the stage and message of an error and the converter that ran; and
// verify_result.json's conversion path.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "convgate/batch/batch.h"
#include "convgate/core/file_util.h"
#include "convgate/gate/verify.h"
#include "convgate/report/json_text.h"
#include "convgate/report/read_report.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<json> ReadJson(const fs::path& path) {
  Result<std::string> text = ReadFile(path, kMaxTextFileBytes);
  if (!text.ok()) return std::nullopt;
  json parsed = json::parse(*text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

// report.json writes a non-finite figure as a string ("nan", "inf"); the store keeps none.
std::optional<double> Finite(double value) {
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

int64_t NonFinite(const compare::ValueSummary& values) {
  return values.nan + values.pos_inf + values.neg_inf;
}

// A run's output: the model's values.
store::OutputRecord OutputOf(const gate::SanityCheck& check) {
  store::OutputRecord output;
  output.sample = check.sample;
  output.output = check.output;
  output.verdict = check.passed ? Verdict::kPass : Verdict::kFail;
  output.non_finite = NonFinite(check.values);
  return output;
}

// A comparison's output: the target's values, the error figures and the worst element.
store::OutputRecord OutputOf(const gate::OutputCheck& check) {
  store::OutputRecord output;
  output.sample = check.sample;
  output.output = check.output;
  output.verdict = check.passed ? Verdict::kPass : Verdict::kFail;
  if (!check.comparison) return output;  // a side lacks the output: no figures
  const compare::TensorComparison& cmp = *check.comparison;
  output.non_finite = NonFinite(cmp.target_values);
  output.introduced_non_finite = cmp.non_finite.introduced_nan + cmp.non_finite.introduced_inf;
  output.mismatches = cmp.mismatches;
  // NaN is never agreement: without a finite element pair there is no error or agreement figure,
  // and where the target introduced NaN or Inf the finite pairs' cosine and SNR would pass for
  // the output's.
  const bool no_pairs = cmp.errors.compared == 0;
  if (!no_pairs) {
    output.max_abs_error = Finite(cmp.errors.max_abs_error);
    output.mean_abs_error = Finite(cmp.errors.mean_abs_error);
  }
  if (!no_pairs && *output.introduced_non_finite == 0) {
    output.cosine = Finite(cmp.metrics.cosine);
    output.snr_db = Finite(cmp.metrics.snr_db);
  }
  if (cmp.worst.flat >= 0) {
    output.worst_index = json(cmp.worst.index).dump();
    output.worst_source = Finite(cmp.worst.source);
    output.worst_target = Finite(cmp.worst.target);
  }
  return output;
}

// The benchmark's figures: the measured model's (the target's, or the one model's), and with two
// sides the source's median and the speedup.
void ReadBenchmark(const std::optional<bench::BenchmarkRecord>& record, store::JobRecord& job) {
  if (!record || record->sides.empty()) return;
  const bench::SideBenchmark* measured = bench::FindSide(*record, "target");
  if (measured == nullptr) measured = &record->sides.front();
  job.p50_ms = measured->latency.p50_ms;
  job.p50_low_ms = measured->latency.p50_low_ms;
  job.p50_high_ms = measured->latency.p50_high_ms;
  job.p99_ms = measured->latency.p99_ms;
  job.throughput = measured->throughput;
  job.peak_rss_bytes = static_cast<double>(measured->peak_rss_bytes);
  job.load_average = std::max(record->machine.load_before, record->machine.load_after);
  if (const bench::SideBenchmark* source = bench::FindSide(*record, "source")) {
    job.source_p50_ms = source->latency.p50_ms;
  }
  if (record->speed) {
    job.speedup = record->speed->speedup;
    job.speedup_low = record->speed->speedup_low;
    job.speedup_high = record->speed->speedup_high;
  }
}

// An error stopped the job at a stage: "convert-failed", "load-failed", ...
void ReadError(const std::optional<gate::GateError>& error, store::JobRecord& job) {
  if (!error || job.error_category != "cannot-run") return;
  job.error_category = std::string(gate::StageName(error->stage)) + "-failed";
  job.error_text = error->status.message();
}

template <typename Check>
void ReadOutputs(const std::vector<Check>& checks, store::JobRecord& job) {
  for (const Check& check : checks) job.outputs.push_back(OutputOf(check));
}

void ReadVerify(const gate::VerifyReport& report, store::JobRecord& job) {
  // The converter that ran (the parameters are the job's own, known before it ran:
  // JobRecord::conversion_params).
  if (report.conversion) {
    const std::string& tool = report.conversion->tool;
    const std::string& version = report.conversion->tool_version;
    job.converter_version = tool + (tool.empty() || version.empty() ? "" : " ") + version;
  }
  ReadError(report.error, job);
  if (report.comparison) {
    ReadOutputs(report.comparison->checks, job);
    ReadBenchmark(report.comparison->benchmark, job);
  }
}

// report.json of `command`, read with the report's reader; a report it cannot read (a job killed
// while writing it) leaves the job as it was.
void ReadReport(std::string_view text, const std::string& command, store::JobRecord& job) {
  const std::string_view what = "report.json";
  if (command == "verify") {
    Result<gate::VerifyReport> report = report::ParseReport<gate::VerifyReport>(text, what);
    if (report.ok()) ReadVerify(*report, job);
  } else if (command == "compare") {
    Result<gate::CompareReport> report = report::ParseReport<gate::CompareReport>(text, what);
    if (!report.ok()) return;
    ReadError(report->error, job);
    ReadOutputs(report->checks, job);
    ReadBenchmark(report->benchmark, job);
  } else if (command == "bench") {
    Result<gate::BenchReport> report = report::ParseReport<gate::BenchReport>(text, what);
    if (!report.ok()) return;
    ReadError(report->error, job);
    ReadBenchmark(report->benchmark, job);
  } else if (command == "run") {
    Result<gate::RunReport> report = report::ParseReport<gate::RunReport>(text, what);
    if (!report.ok()) return;
    ReadError(report->error, job);
    ReadOutputs(report->checks, job);
  }
}

void ReadVerifyResult(const json& verify, store::JobRecord& job) {
  if (!verify.is_object()) return;
  if (verify.contains("conversion_path") && verify["conversion_path"].is_string()) {
    job.conversion_path = verify["conversion_path"].get<std::string>();
  }
  if (job.verdict == Verdict::kFail && verify.contains("error") && verify["error"].is_string()) {
    job.error_text = verify["error"].get<std::string>();
  }
}

}  // namespace

void ReadJobJson(const json* verify, const json* report, const std::string& command,
                 store::JobRecord& job) {
  if (verify != nullptr) ReadVerifyResult(*verify, job);
  if (report != nullptr && report->is_object())
    ReadReport(report::DumpJson(*report, -1, /*list_escaped=*/false), command, job);
}

void ReadJobResults(const fs::path& dir, const std::string& command, store::JobRecord& job) {
  if (const std::optional<json> verify = ReadJson(dir / "verify_result.json")) {
    ReadVerifyResult(*verify, job);
  }
  Result<std::string> report = ReadFile(dir / "report.json", kMaxTextFileBytes);
  if (report.ok()) ReadReport(*report, command, job);
}

}  // namespace convgate::batch
