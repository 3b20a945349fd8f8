// A results store's jobs (history --json's rows) as series: one model's one conversion across
// runs, and whether its latest job regressed; shared by the HTML page and the Markdown summary.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace convgate::report::html {

struct StoreSeries {
  std::string entry;
  std::string conversion;  // history's conversion_label; "target" for any given target
  std::vector<const nlohmann::json*> jobs;  // oldest run first
};

// The rows of `history` by (entry id, conversion label); `conversions` gets each label once, in
// the order first seen. The series point into `history`.
std::map<std::pair<std::string, std::string>, StoreSeries> GroupSeries(
    const nlohmann::json& history, std::vector<std::string>& conversions);

// "" when the latest job did not regress; else why: it passed before and does not now, or its
// median latency is more than 5% above the job before's beyond both 95% intervals (history
// --regressions' rules).
std::string RegressionOf(const StoreSeries& series);

}  // namespace convgate::report::html
