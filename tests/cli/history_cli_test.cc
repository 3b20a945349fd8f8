// `run`, `compare` and `verify` with --store (a run of one job each), and `convgate history` over
// them: the latest verdict per entry and conversion, the trend of a figure, stores that are
// missing or cannot be opened.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/store/store.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

class HistoryCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::unsetenv("CONVGATE_STORE");
  }

  std::string Model(const std::string& name) const { return (kExamples / name).string(); }

  std::vector<store::HistoryRow> Jobs(const std::string& db) {
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({db});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return {};
    Result<std::vector<store::HistoryRow>> rows = (*opened)->Jobs({});
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? *rows : std::vector<store::HistoryRow>{};
  }
};

TEST_F(HistoryCliTest, SingleGatesAreRecordedAsRunsOfOneJob) {
  const std::string db = Path("gates.db");
  ProcessResult verify =
      Convgate({"verify", Model("tinycnn.onnx"), "--target", Model("tinycnn_converted.onnx"),
                "--store", db, "--out", Path("verify")});
  ASSERT_EQ(verify.exit_code, 0) << Describe(verify);
  ProcessResult compare =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx"), "--store", db,
                "--id", "cnn-perturbed"});
  ASSERT_EQ(compare.exit_code, 1) << Describe(compare);
  ProcessResult run = Convgate({"run", Model("tinycnn.onnx"), "--store", db});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  ProcessResult nan = Convgate({"run", Model("tinycnn_nan.onnx"), "--store", db});
  ASSERT_EQ(nan.exit_code, 1) << Describe(nan);

  const std::vector<store::HistoryRow> jobs = Jobs(db);
  ASSERT_EQ(jobs.size(), 4u);
  const store::JobRecord& v = jobs[0].job;
  EXPECT_EQ(v.entry_id, "tinycnn");
  EXPECT_EQ(v.command, "verify");
  EXPECT_EQ(v.conversion, "target:tinycnn_converted.onnx");
  EXPECT_EQ(v.verdict, Verdict::kPass);
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.model_sha256.size(), 64u);
  EXPECT_GT(v.duration_seconds, 0.0);
  EXPECT_EQ(v.result_dir, Path("verify"));
  EXPECT_TRUE(jobs[0].max_abs_error.has_value());
  EXPECT_TRUE(jobs[0].cosine.has_value());
  const store::JobRecord& c = jobs[1].job;
  EXPECT_EQ(c.entry_id, "cnn-perturbed");
  EXPECT_EQ(c.command, "compare");
  EXPECT_EQ(c.verdict, Verdict::kFail);
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_GT(jobs[1].max_abs_error.value_or(0), 1e-3);
  EXPECT_NE(jobs[0].run_id, jobs[1].run_id);  // one run per gate
  EXPECT_EQ(jobs[2].job.command, "run");
  EXPECT_EQ(jobs[2].job.conversion, "");
  EXPECT_EQ(jobs[3].job.entry_id, "tinycnn_nan");
  EXPECT_EQ(jobs[3].job.verdict, Verdict::kFail);

  ProcessResult history = Convgate({"history", "--store", db, "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json latest = json::parse(history.out);
  // tinycnn twice (verify's target:..., run's none), cnn-perturbed, tinycnn_nan.
  ASSERT_EQ(latest.size(), 4u) << history.out;
  ProcessResult usage = Convgate({"run", Model("tinycnn.onnx"), "--id", "x"});
  EXPECT_EQ(usage.exit_code, 2) << Describe(usage);
}

TEST_F(HistoryCliTest, StoreThatCannotBeOpenedIsExit3AndTheResultFilesStay) {
  ProcessResult r =
      Convgate({"verify", Model("tinycnn.onnx"), "--target", Model("tinycnn_converted.onnx"),
                "--store", Path("no/such/folder/x.db"), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("no/such/folder/x.db"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "out/verify_result.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out/report.json"));
  // Not a database: named too.
  std::ofstream(Path("text.db")) << "this is not a database, it is a text file of some length\n";
  ProcessResult text =
      Convgate({"run", Model("tinycnn.onnx"), "--store", Path("text.db"), "--out", Path("o2")});
  EXPECT_EQ(text.exit_code, 3) << Describe(text);
  EXPECT_NE(text.err.find("text.db"), std::string::npos) << text.err;
  EXPECT_TRUE(fs::exists(dir_ / "o2/report.json"));
}

TEST_F(HistoryCliTest, TrendFollowsAFigureAcrossRuns) {
  const std::string db = Path("h.db");
  for (const char* target :
       {"tinycnn_converted.onnx", "tinycnn_perturbed.onnx", "tinycnn_converted.onnx"}) {
    // The same entry id and conversion name each time: a nightly "cnn" whose target changed.
    fs::copy_file(Model(target), dir_ / "cnn.onnx", fs::copy_options::overwrite_existing);
    ProcessResult r = Convgate(
        {"compare", Model("tinycnn.onnx"), Path("cnn.onnx"), "--store", db, "--id", "cnn"});
    ASSERT_LE(r.exit_code, 1) << Describe(r);
  }
  ProcessResult trend = Convgate({"history", "--store", db, "--trend", "max_abs_error", "--json"});
  ASSERT_EQ(trend.exit_code, 0) << Describe(trend);
  const json parsed = json::parse(trend.out);
  EXPECT_EQ(parsed["figure"], "max_abs_error");
  const json& rows = parsed["trend"];
  ASSERT_EQ(rows.size(), 3u) << trend.out;
  EXPECT_TRUE(rows[0]["change"].is_null());
  EXPECT_GT(rows[1]["change"].get<double>(), 1e-3);   // the perturbed target
  EXPECT_LT(rows[2]["change"].get<double>(), -1e-3);  // fixed again
  EXPECT_EQ(rows[1]["verdict"], "fail");

  ProcessResult cosine = Convgate({"history", "--store", db, "--trend", "cosine"});
  ASSERT_EQ(cosine.exit_code, 0) << Describe(cosine);
  EXPECT_NE(cosine.out.find("cosine"), std::string::npos) << cosine.out;
  // A pattern selecting one entry shows its trend under the latest verdict.
  ProcessResult one = Convgate({"history", "--store", db, "cnn"});
  ASSERT_EQ(one.exit_code, 0) << Describe(one);
  EXPECT_NE(one.out.find("max_abs_error"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("change"), std::string::npos) << one.out;
  // --since as a time back from now (issue 27, item 5): every run of this test is within a day;
  // none is in the future; a malformed age is a usage error naming both forms.
  ProcessResult recent = Convgate({"history", "--store", db, "--since", "1d", "--json"});
  ASSERT_EQ(recent.exit_code, 0) << Describe(recent);
  EXPECT_EQ(json::parse(recent.out).size(), 1u) << recent.out;
  ProcessResult future = Convgate({"history", "--store", db, "--since", "2999-01-01", "--json"});
  ASSERT_EQ(future.exit_code, 0) << Describe(future);
  EXPECT_TRUE(json::parse(future.out).empty()) << future.out;
  ProcessResult ages = Convgate({"history", "--store", db, "--since", "7 weeks"});
  EXPECT_EQ(ages.exit_code, 2) << Describe(ages);
  EXPECT_NE(ages.err.find("a time back from now (7d, 12h, 30m), not '7 weeks'"), std::string::npos)
      << ages.err;
  // The latest passes again: no regression. Bad figure: usage.
  EXPECT_EQ(Convgate({"history", "--store", db, "--regressions"}).exit_code, 0);
  ProcessResult bad = Convgate({"history", "--store", db, "--trend", "speed"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("max_abs_error"), std::string::npos) << bad.err;
}

// Issue 24, problem 7: a conversion's identity is its kind, its parameters and its converter's
// version. Two --param variants of fp16 under one id are two series: the variant that fails is no
// regression of the one that passed, the trend keeps them apart, and history shows the params. A
// real regression of one variant is still found.
TEST_F(HistoryCliTest, Fp16ParamVariantsAreSeparateConversions) {
  const std::string db = Path("variants.db");
  const auto verify = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "verify", Model("tinycnn.onnx"), "--to", "fp16", "--store", db, "--id", "cnn"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Convgate(args);
  };
  ProcessResult plain = verify({});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  // The variant fails: judged here with no tolerance at all, as a worse conversion would.
  ProcessResult variant = verify({"--param", "keep_io_types=1", "--param", "op_block_list=Relu",
                                  "--atol", "0", "--rtol", "0", "--min-cosine", "1"});
  ASSERT_EQ(variant.exit_code, 1) << Describe(variant);
  ProcessResult regressions = Convgate({"history", "--store", db, "--regressions"});
  EXPECT_EQ(regressions.exit_code, 0) << Describe(regressions);
  EXPECT_NE(regressions.out.find("no regressions"), std::string::npos) << regressions.out;

  ProcessResult table = Convgate({"history", "--store", db});
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  EXPECT_NE(table.out.find("to:fp16{keep_io_types=1,op_block_list=Relu}"), std::string::npos)
      << table.out;
  ProcessResult listed = Convgate({"history", "--store", db, "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  const json latest = json::parse(listed.out);
  ASSERT_EQ(latest.size(), 2u) << listed.out;
  EXPECT_EQ(latest[0]["conversion_params"], "");
  EXPECT_EQ(latest[0]["verdict"], "pass");
  EXPECT_EQ(latest[1]["conversion_params"], "keep_io_types=1,op_block_list=Relu");
  EXPECT_EQ(latest[1]["conversion_label"], "to:fp16{keep_io_types=1,op_block_list=Relu}");
  EXPECT_EQ(latest[1]["verdict"], "fail");
  EXPECT_EQ(latest[1]["converter_version"].get<std::string>().rfind("convgate fp16 ", 0), 0u)
      << latest[1].dump();

  // The plain conversion fails in a later run: that is a regression, of that series only.
  ProcessResult broken = verify({"--atol", "0", "--rtol", "0", "--min-cosine", "1"});
  ASSERT_EQ(broken.exit_code, 1) << Describe(broken);
  ProcessResult found = Convgate({"history", "--store", db, "--regressions", "--json"});
  EXPECT_EQ(found.exit_code, 1) << Describe(found);
  const json regressed = json::parse(found.out);
  ASSERT_EQ(regressed.size(), 1u) << found.out;
  EXPECT_EQ(regressed[0]["conversion_params"], "");
  EXPECT_EQ(regressed[0]["last_pass"]["run_id"], latest[0]["run_id"]);

  ProcessResult trend = Convgate({"history", "--store", db, "--trend", "max_abs_error", "--json"});
  ASSERT_EQ(trend.exit_code, 0) << Describe(trend);
  const json rows = json::parse(trend.out)["trend"];
  ASSERT_EQ(rows.size(), 3u) << trend.out;
  // Plain, plain, then the variant: its first job changes from nothing.
  EXPECT_EQ(rows[0]["conversion_params"], "");
  EXPECT_EQ(rows[1]["conversion_params"], "");
  EXPECT_TRUE(rows[1]["change"].is_number()) << rows.dump();
  EXPECT_EQ(rows[2]["conversion_params"], "keep_io_types=1,op_block_list=Relu");
  EXPECT_TRUE(rows[2]["change"].is_null()) << rows.dump();
}

// Issue 24, problem 8: NaN is never agreement. A target whose outputs are NaN shows nan, not 0, as
// its max|diff| in the table and in history; its cosine and SNR are null in report.json and in
// history --json; the store counts its non-finite elements.
TEST_F(HistoryCliTest, NanTargetIsNeverAgreement) {
  const std::string db = Path("nan.db");
  ProcessResult compare = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_nan.onnx"),
                                    "--store", db, "--out", Path("out")});
  ASSERT_EQ(compare.exit_code, 1) << Describe(compare);
  // The table's max|diff| column: nan on the outputs' rows, never a 0 standing for them.
  EXPECT_NE(compare.out.find(" nan "), std::string::npos) << compare.out;

  std::ifstream in(dir_ / "out/report.json");
  const json report = json::parse(in);
  bool undefined_cosine = false;
  for (const json& result : report["results"]) {
    const json& stats = result["stats"];
    if (stats["errors"]["compared"] == 0) {
      EXPECT_TRUE(stats["metrics"]["cosine"].is_null()) << stats["metrics"].dump();
      EXPECT_TRUE(stats["metrics"]["snr_db"].is_null()) << stats["metrics"].dump();
      undefined_cosine = true;
    }
  }
  EXPECT_TRUE(undefined_cosine) << "no output without a finite pair: the fixture changed";

  const std::vector<store::HistoryRow> jobs = Jobs(db);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_GT(jobs[0].non_finite.value_or(0), 0);
  EXPECT_GT(jobs[0].introduced_non_finite.value_or(0), 0);
  EXPECT_FALSE(jobs[0].cosine.has_value());
  EXPECT_FALSE(jobs[0].snr_db.has_value());

  ProcessResult history = Convgate({"history", "--store", db, "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json latest = json::parse(history.out);
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_TRUE(latest[0]["cosine"].is_null()) << latest.dump();
  EXPECT_TRUE(latest[0]["snr_db"].is_null()) << latest.dump();
  EXPECT_GT(latest[0]["non_finite"].get<int64_t>(), 0) << latest.dump();
  ProcessResult table = Convgate({"history", "--store", db});
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  EXPECT_NE(table.out.find("fail     nan "), std::string::npos) << table.out;

  // A run of the NaN model counts the model's own non-finite elements.
  ProcessResult run = Convgate({"run", Model("tinycnn_nan.onnx"), "--store", db});
  ASSERT_EQ(run.exit_code, 1) << Describe(run);
  const std::vector<store::HistoryRow> both = Jobs(db);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].non_finite, jobs[0].non_finite);
}

TEST_F(HistoryCliTest, MissingStoreIsNamedAndNeverCreated) {
  ProcessResult r = Convgate({"history", "--store", Path("nothing.db")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("no results store at " + Path("nothing.db")), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "nothing.db"));
  // CONVGATE_STORE is the default location.
  ::setenv("CONVGATE_STORE", Path("env.db").c_str(), 1);
  ProcessResult env = Convgate({"history"});
  ::unsetenv("CONVGATE_STORE");
  EXPECT_EQ(env.exit_code, 3) << Describe(env);
  EXPECT_NE(env.err.find("env.db"), std::string::npos) << env.err;
}

}  // namespace
}  // namespace convgate
