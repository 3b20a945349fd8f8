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
  row.job.verdict = Verdict::kPass;
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

// Like with like: a --param variant is its own series, and so is a converter upgrade; a job that
// stopped before converting (no converter version) stays in its conversion's latest series.
TEST(HistoryTrendTest, SeriesAreOneConversionIdentityEach) {
  store::HistoryRow plain = Row(1, "a", 1.0);
  plain.job.converter_version = "convgate fp16 1";
  store::HistoryRow variant = Row(2, "a", 5.0);
  variant.job.conversion_params = "keep_io_types=1";
  variant.job.converter_version = "convgate fp16 1";
  store::HistoryRow errored = Row(3, "a", std::nullopt);
  errored.job.verdict = Verdict::kError;
  store::HistoryRow again = Row(4, "a", 1.25);
  again.job.converter_version = "convgate fp16 1";
  store::HistoryRow upgraded = Row(5, "a", 3.0);
  upgraded.job.converter_version = "convgate fp16 2";
  const std::vector<store::HistoryRow> jobs = {plain, variant, errored, again, upgraded};
  const std::vector<TrendRow> rows = Trend(jobs, "max_abs_error");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].row->run_id, 1);
  EXPECT_EQ(rows[1].row->run_id, 3);  // the error joins the plain series
  EXPECT_EQ(rows[2].row->run_id, 4);
  EXPECT_DOUBLE_EQ(*rows[2].change, 0.25);  // not against the variant's 5.0
  EXPECT_EQ(rows[3].row->run_id, 5);
  EXPECT_FALSE(rows[3].change.has_value());  // a new converter version starts a new series
  EXPECT_EQ(rows[4].row->job.conversion_params, "keep_io_types=1");
  EXPECT_FALSE(rows[4].change.has_value());
  const std::string table = TrendTable(rows, "max_abs_error");
  EXPECT_NE(table.find("to:fp16{keep_io_types=1}"), std::string::npos) << table;
  EXPECT_NE(table.find("convgate fp16 2"), std::string::npos) << table;
  const nlohmann::json json = TrendJson(rows, "max_abs_error");
  EXPECT_EQ(json["trend"][4]["conversion_params"], "keep_io_types=1");
}

TEST(HistoryTrendTest, ConversionIdentityHelpers) {
  EXPECT_EQ(store::CanonicalParams({{"op_block_list", "Resize,TopK"}, {"keep_io_types", "1"}}),
            "keep_io_types=1,op_block_list=Resize,TopK");
  EXPECT_EQ(store::CanonicalParams({}), "");
  store::JobRecord a;
  a.entry_id = "m";
  a.conversion = "to:fp16";
  store::JobRecord b = a;
  EXPECT_EQ(store::ConversionLabel(a), "to:fp16");
  b.conversion_params = "keep_io_types=1";
  EXPECT_EQ(store::ConversionLabel(b), "to:fp16{keep_io_types=1}");
  EXPECT_FALSE(store::SameConversion(a, b));
  b.conversion_params = "";
  b.converter_version = "v2";
  EXPECT_TRUE(store::SameConversion(a, b));  // a does not know its converter version
  a.converter_version = "v1";
  EXPECT_FALSE(store::SameConversion(a, b));
  b.converter_version = "v1";
  b.model_id = "other";
  EXPECT_FALSE(store::SameConversion(a, b));
}

TEST(HistoryTrendTest, FigureNames) {
  EXPECT_EQ(*TrendFigureName("snr"), "snr_db");
  EXPECT_EQ(*TrendFigureName("cosine"), "cosine");
  EXPECT_EQ(*TrendFigureName("non_finite"), "non_finite");
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
