#include "report/html/store_series.h"

#include <algorithm>

#include "report/html/json_get.h"
#include "report/html/svg.h"

namespace convgate::report::html {
using nlohmann::json;

std::map<std::pair<std::string, std::string>, StoreSeries> GroupSeries(
    const json& history, std::vector<std::string>& conversions) {
  std::map<std::pair<std::string, std::string>, StoreSeries> series;
  if (!history.is_array()) return series;
  for (const json& job : history) {
    if (!job.is_object()) continue;
    const std::string entry = Text(job, "entry_id");
    // As store::SeriesKey: a given target is one series whatever its file is called (a new
    // candidate under a new name is the same conversion, judged against the one before).
    std::string conversion = Text(job, "conversion_label");
    if (conversion.starts_with("target:")) conversion = "target";
    StoreSeries& one = series[{entry, conversion}];
    one.entry = entry;
    one.conversion = conversion;
    one.jobs.push_back(&job);
    if (std::find(conversions.begin(), conversions.end(), conversion) == conversions.end()) {
      conversions.push_back(conversion);
    }
  }
  for (auto& [key, one] : series) {
    std::stable_sort(one.jobs.begin(), one.jobs.end(), [](const json* a, const json* b) {
      return Number(*a, "run_id") < Number(*b, "run_id");
    });
  }
  return series;
}

std::string RegressionOf(const StoreSeries& series) {
  if (series.jobs.empty()) return "";
  const json& latest = *series.jobs.back();
  if (Text(latest, "verdict") != "pass") {
    for (size_t i = 0; i + 1 < series.jobs.size(); ++i) {
      if (Text(*series.jobs[i], "verdict") == "pass") return "regression: passed before";
    }
  }
  if (series.jobs.size() >= 2) {
    const json& before = *series.jobs[series.jobs.size() - 2];
    const double now = Number(latest, "p50_ms");
    const double then = Number(before, "p50_ms");
    if (now > 0 && then > 0 && now > then * 1.05 &&
        Number(latest, "p50_low_ms") > Number(before, "p50_high_ms")) {
      return "latency regression: p50 " + Short(then) + " -> " + Short(now) + " ms";
    }
  }
  return "";
}

}  // namespace convgate::report::html
