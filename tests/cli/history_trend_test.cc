// history --trend's series and changes, and the batch progress line, without a binary.
#include "cli/history_trend.h"

#include <gtest/gtest.h>

#include "cli/batch_progress.h"

namespace convgate::cli {
namespace {

store::HistoryRow Row(int64_t run, const std::string& entry, std::optional<double> error) {
  store::HistoryRow row;
  row.run_id = run;
  row.job_id = run;
  row.job.entry_id = entry;
  row.job.conversion = "to:fp16";
  row.job.verdict = "pass";
  row.max_abs_error = error;
  return row;
}

TEST(HistoryTrendTest, ChangesAreWithinEachSeries) {
  const std::vector<store::HistoryRow> jobs = {Row(1, "b", 0.5), Row(1, "a", 1.0),
                                               Row(2, "a", std::nullopt), Row(3, "a", 1.5),
                                               Row(3, "b", 0.25)};
  const std::vector<TrendRow> rows = Trend(jobs, "max_abs_error");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].row->job.entry_id, "a");
  EXPECT_FALSE(rows[0].change.has_value());
  EXPECT_FALSE(rows[1].value.has_value());  // a job without the figure (an error)
  EXPECT_DOUBLE_EQ(*rows[2].change, 0.5);   // from the last job that had it
  EXPECT_EQ(rows[3].row->job.entry_id, "b");
  EXPECT_DOUBLE_EQ(*rows[4].change, -0.25);
  const std::string table = TrendTable(rows, "max_abs_error");
  EXPECT_NE(table.find("+0.5"), std::string::npos) << table;
  EXPECT_NE(table.find("-0.25"), std::string::npos) << table;
  const nlohmann::json json = TrendJson(rows, "max_abs_error");
  EXPECT_EQ(json["trend"].size(), 5u);
  EXPECT_TRUE(json["trend"][1]["value"].is_null());
}

TEST(HistoryTrendTest, FigureNames) {
  EXPECT_EQ(*TrendFigureName("snr"), "snr_db");
  EXPECT_EQ(*TrendFigureName("cosine"), "cosine");
  EXPECT_FALSE(TrendFigureName("speed").ok());
}

TEST(BatchProgressTest, LineHasCountsTimesAndRunningEntries) {
  EXPECT_EQ(BatchProgress::Line(2, 10, 1, 1, 0, 65.0, {"bert", "t5"}, 200),
            "[2/10] 1 passed, 1 failed, 0 errors | 1:05, ETA 4:20 | running: bert, t5");
  EXPECT_EQ(BatchProgress::Line(0, 3, 0, 0, 0, 0.2, {}, 200),
            "[0/3] 0 passed, 0 failed, 0 errors | 0:00, ETA -");
  EXPECT_EQ(BatchProgress::Line(3, 3, 3, 0, 0, 3700.0, {}, 200),
            "[3/3] 3 passed, 0 failed, 0 errors | 1:01:40");
  EXPECT_EQ(BatchProgress::Line(2, 10, 1, 1, 0, 65.0, {"bert", "t5"}, 20).size(), 20u);
}

}  // namespace
}  // namespace convgate::cli
