#include "cli/history_trend.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace convgate::cli {
namespace {

std::optional<double> FigureOf(const store::HistoryRow& row, const std::string& figure) {
  if (figure == "max_abs_error") return row.max_abs_error;
  if (figure == "mean_abs_error") return row.mean_abs_error;
  if (figure == "cosine") return row.cosine;
  if (figure == "snr_db") return row.snr_db;
  if (figure == "mismatches" && row.mismatches) return static_cast<double>(*row.mismatches);
  if (figure == "seconds") return row.job.duration_seconds;
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

std::string Cell(const std::string& text, size_t width) {
  return text.size() >= width ? text + "  " : text + std::string(width - text.size() + 2, ' ');
}

}  // namespace

Result<std::string> TrendFigureName(const std::string& text) {
  if (text == "snr") return std::string("snr_db");
  for (const char* name :
       {"max_abs_error", "mean_abs_error", "mismatches", "cosine", "snr_db", "seconds"}) {
    if (text == name) return text;
  }
  return Status::InvalidArgument(
      "--trend follows max_abs_error, mean_abs_error, mismatches, cosine, snr_db (snr) or "
      "seconds, not '" +
      text + "'");
}

std::vector<TrendRow> Trend(const std::vector<store::HistoryRow>& jobs, const std::string& figure) {
  std::map<std::pair<std::string, std::string>, std::vector<const store::HistoryRow*>> series;
  for (const store::HistoryRow& row : jobs) {
    series[{row.job.entry_id, row.job.conversion}].push_back(&row);  // jobs come oldest first
  }
  std::vector<TrendRow> rows;
  for (const auto& [key, members] : series) {
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
  size_t id_width = 5;
  size_t conversion_width = 10;
  for (const TrendRow& trend : rows) {
    id_width = std::max(id_width, trend.row->job.entry_id.size());
    conversion_width = std::max(conversion_width, trend.row->job.conversion.size());
  }
  const size_t figure_width = std::max<size_t>(figure.size(), 10);
  std::string text = Cell("entry", id_width) + Cell("conversion", conversion_width) +
                     Cell("run", 4) + Cell("finished", 20) + Cell("verdict", 7) +
                     Cell(figure, figure_width) + "change\n";
  for (const TrendRow& trend : rows) {
    const store::JobRecord& job = trend.row->job;
    text += Cell(job.entry_id, id_width) +
            Cell(job.conversion.empty() ? "-" : job.conversion, conversion_width) +
            Cell(std::to_string(trend.row->run_id), 4) + Cell(job.finished_at, 20) +
            Cell(job.verdict, 7) + Cell(Number(trend.value, false, figure), figure_width) +
            Number(trend.change, true, figure) + "\n";
  }
  return text;
}

nlohmann::json TrendJson(const std::vector<TrendRow>& rows, const std::string& figure) {
  nlohmann::json list = nlohmann::json::array();
  for (const TrendRow& trend : rows) {
    const store::JobRecord& job = trend.row->job;
    list.push_back({{"entry_id", job.entry_id},
                    {"conversion", job.conversion},
                    {"run_id", trend.row->run_id},
                    {"job_id", trend.row->job_id},
                    {"finished_at", job.finished_at},
                    {"verdict", job.verdict},
                    {"value", trend.value ? nlohmann::json(*trend.value) : nullptr},
                    {"change", trend.change ? nlohmann::json(*trend.change) : nullptr}});
  }
  return {{"figure", figure}, {"trend", list}};
}

}  // namespace convgate::cli
