// `convgate history --trend [FIGURE]`: one row per job of each entry and conversion, oldest
// first, with the figure and its change from the job before (is the fp16 error creeping up?).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/store/store.h"

namespace convgate::cli {

// The figures a trend follows: max_abs_error (default), mean_abs_error, mismatches, cosine, snr_db
// ("snr" too), non_finite and seconds; and a benchmark's p50_ms, p99_ms, throughput, speedup and
// peak_rss_bytes (jobs that measured none show "-"). Returns the canonical name; InvalidArgument
// listing them otherwise.
Result<std::string> TrendFigureName(const std::string& text);

struct TrendRow {
  const store::HistoryRow* row = nullptr;
  std::optional<double> value;
  std::optional<double> change;  // value minus the previous job's value of the same series
};

// Grouped by series in store::SeriesKey order (entry id, model id, conversion, parameters), each
// series one converter version (store::SameConversion), each oldest first. `jobs` outlives the
// result (rows point into it).
std::vector<TrendRow> Trend(const std::vector<store::HistoryRow>& jobs, const std::string& figure);

std::string TrendTable(const std::vector<TrendRow>& rows, const std::string& figure);

// --since as the store compares it: an ISO 8601 date or time (UTC) as given, or a duration ("7d",
// "12h") back from now. InvalidArgument naming both forms.
Result<std::string> SinceTime(const std::string& since);

// A job of the store as `history --json` prints it (and `report --store` renders it): the job
// record's fields (batch::JobJson), entry_id, run_id, conversion_label and the output figures.
nlohmann::json HistoryRowJson(const store::HistoryRow& row);
nlohmann::json TrendJson(const std::vector<TrendRow>& rows, const std::string& figure);

}  // namespace convgate::cli
