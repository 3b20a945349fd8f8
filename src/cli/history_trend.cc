#include "cli/history_trend.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <map>

#include "convgate/batch/batch.h"
#include "convgate/core/text_table.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

std::vector<std::pair<const char*, double>> BenchmarkFigures(const store::JobRecord& job) {
  return {{"p50_ms", job.p50_ms},
          {"p99_ms", job.p99_ms},
          {"throughput", job.throughput},
          {"speedup", job.speedup},
          {"peak_rss_bytes", job.peak_rss_bytes}};
}

std::optional<double> FigureOf(const store::HistoryRow& row, const std::string& figure) {
  if (figure == "max_abs_error") return row.max_abs_error;
  if (figure == "mean_abs_error") return row.mean_abs_error;
  if (figure == "cosine") return row.cosine;
  if (figure == "snr_db") return row.snr_db;
  if (figure == "mismatches" && row.mismatches) return static_cast<double>(*row.mismatches);
  if (figure == "seconds") return row.job.duration_seconds;
  if (figure == "non_finite" && row.non_finite) return static_cast<double>(*row.non_finite);
  // The benchmark's figures are 0 in a job that measured none.
  const store::JobRecord& job = row.job;
  for (const auto& [name, value] : BenchmarkFigures(job)) {
    if (figure == name) return value > 0 ? std::optional<double>(value) : std::nullopt;
  }
  return std::nullopt;
}

// A cosine that matters sits within 1e-4 of 1 (0.9999998 against 0.99991): four digits would
// print both as "1", so cosines keep seven.
std::string Number(const std::optional<double>& value, bool sign, const std::string& figure) {
  if (!value) return "-";
  const bool cosine = figure == "cosine";
  const char* format = sign ? (cosine ? "%+.2g" : "%+.3g") : (cosine ? "%.7g" : "%.4g");
  char text[32];
  std::snprintf(text, sizeof(text), format, *value);
  return text;
}

}  // namespace

Result<std::string> TrendFigureName(const std::string& text) {
  if (text == "snr") return std::string("snr_db");
  for (const char* name :
       {"max_abs_error", "mean_abs_error", "mismatches", "cosine", "snr_db", "non_finite",
        "seconds", "p50_ms", "p99_ms", "throughput", "speedup", "peak_rss_bytes"}) {
    if (text == name) return text;
  }
  return Status::InvalidArgument(
      "--trend follows max_abs_error, mean_abs_error, mismatches, cosine, snr_db (snr), "
      "non_finite, seconds, or a benchmark's p50_ms, p99_ms, throughput, speedup or "
      "peak_rss_bytes, not '" +
      text + "'");
}

std::vector<TrendRow> Trend(const std::vector<store::HistoryRow>& jobs, const std::string& figure) {
  // Like with like (store::SameConversion): by store::SeriesKey, then by converter version. A job
  // that does not know its converter's version (it stopped before converting) joins the latest
  // series of its conversion; the first job that knows it names a series that had none.
  using Series = std::vector<const store::HistoryRow*>;
  std::map<std::vector<std::string>, std::vector<Series>> by_conversion;
  for (const store::HistoryRow& row : jobs) {  // jobs come oldest first
    const store::JobRecord& job = row.job;
    std::vector<Series>& all = by_conversion[store::SeriesKey(job)];
    // A series' converter version: the first its jobs know, "" while none does.
    const auto version_of = [](const Series& series) {
      for (const store::HistoryRow* member : series) {
        if (!member->job.converter_version.empty()) return member->job.converter_version;
      }
      return std::string();
    };
    Series* member_of = nullptr;
    if (job.converter_version.empty()) {
      if (!all.empty()) member_of = &all.back();
    } else {
      for (Series& one : all) {
        if (version_of(one) == job.converter_version) member_of = &one;
      }
      for (Series& one : all) {
        if (member_of == nullptr && version_of(one).empty()) member_of = &one;
      }
    }
    if (member_of == nullptr) member_of = &all.emplace_back();
    member_of->push_back(&row);
  }
  std::vector<Series> series;
  for (auto& [key, all] : by_conversion) {
    for (Series& one : all) series.push_back(std::move(one));
  }
  std::vector<TrendRow> rows;
  for (const Series& members : series) {
    std::optional<double> previous;
    for (const store::HistoryRow* row : members) {
      TrendRow trend{row, FigureOf(*row, figure), std::nullopt};
      if (trend.value && previous) trend.change = *trend.value - *previous;
      if (trend.value) previous = trend.value;
      rows.push_back(trend);
    }
  }
  return rows;
}

std::string TrendTable(const std::vector<TrendRow>& rows, const std::string& figure) {
  TextTable table(
      {"entry", "conversion", "converter", "run", "finished", "verdict", figure, "change"});
  for (const TrendRow& trend : rows) {
    const store::JobRecord& job = trend.row->job;
    const std::string conversion = store::ConversionLabel(job);
    table.AddRow({job.entry_id, conversion.empty() ? "-" : conversion,
                  job.converter_version.empty() ? "-" : job.converter_version,
                  std::to_string(trend.row->run_id), job.finished_at,
                  std::string(VerdictName(job.verdict)), Number(trend.value, false, figure),
                  Number(trend.change, true, figure)});
  }
  return table.Render();
}

nlohmann::json TrendJson(const std::vector<TrendRow>& rows, const std::string& figure) {
  nlohmann::json list = nlohmann::json::array();
  for (const TrendRow& trend : rows) {
    const store::JobRecord& job = trend.row->job;
    list.push_back({{"entry_id", job.entry_id},
                    {"conversion", job.conversion},
                    {"conversion_params", job.conversion_params},
                    {"converter_version", job.converter_version},
                    {"run_id", trend.row->run_id},
                    {"job_id", trend.row->job_id},
                    {"finished_at", job.finished_at},
                    {"verdict", VerdictName(job.verdict)},
                    {"value", trend.value ? nlohmann::json(*trend.value) : nullptr},
                    {"change", trend.change ? nlohmann::json(*trend.change) : nullptr}});
  }
  return {{"figure", figure}, {"trend", list}};
}

nlohmann::json HistoryRowJson(const store::HistoryRow& row) {
  const store::JobRecord& job = row.job;
  nlohmann::json json = batch::JobJson(job);
  json.erase("id");  // history names it entry_id, as the store does
  json["run_id"] = row.run_id;
  json["conversion_label"] = store::ConversionLabel(job);
  const auto optional = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  json["max_abs_error"] = optional(row.max_abs_error);
  json["mean_abs_error"] = optional(row.mean_abs_error);
  json["mismatches"] = optional(row.mismatches);
  json["cosine"] = optional(row.cosine);
  json["snr_db"] = optional(row.snr_db);
  json["non_finite"] = optional(row.non_finite);
  json["introduced_non_finite"] = optional(row.introduced_non_finite);
  return json;
}

// --since as the store compares it: an ISO 8601 date or time (UTC) as given, or a duration ("7d",
// "12h", as `cache prune --min-age` takes) back from now.
Result<std::string> SinceTime(const std::string& since) {
  const bool date = since.size() >= 10 && since[4] == '-' && since[7] == '-' &&
                    std::isdigit(static_cast<unsigned char>(since[0])) &&
                    std::isdigit(static_cast<unsigned char>(since[9]));
  if (date) return since;
  Result<double> ago = ParseDuration(since);
  if (!ago.ok()) {
    return Status::InvalidArgument(
        "--since takes a date YYYY-MM-DD (optionally THH:MM:SSZ, UTC) or a time back from now "
        "(7d, 12h, 30m), not '" +
        since + "'");
  }
  return UtcIso8601(static_cast<int64_t>(std::time(nullptr)) - static_cast<int64_t>(*ago));
}

}  // namespace convgate::cli
