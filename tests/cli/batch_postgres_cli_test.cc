// `convgate batch` and `convgate history` on the real binary against PostgreSQL: the throwaway
// cluster of the postgres ctest fixture (CONVGATE_TEST_PG_URL), one fresh database per test.
// Verdicts and figures reach the server, -j 2 writers lose nothing, --resume skips what the server
// holds, --regressions reads it, and a password given in the URL is never printed or recorded.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <string>
#include <vector>

#include "convgate/store/store.h"
#include "store/store_test_backend.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

class BatchPostgresCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    backend_ = store::testing::MakePostgresTestBackend(CONVGATE_TEST_PG_URL);
    url_ = backend_->FreshLocation(std::string("cli_") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    backend_->Cleanup();
    CliTest::TearDown();
  }

  std::string Model(const std::string& name) const { return (kExamples / name).string(); }

  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  std::string Entry(const std::string& id, const std::string& source,
                    const std::string& target) const {
    return "  - id: " + id + "\n    source: " + source + "\n    target: " + target + "\n";
  }

  // Passing, failing and missing entries.
  std::string MixedManifest() const {
    return "models:\n" + Entry("good", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")) +
           Entry("perturbed", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")) +
           Entry("missing", Path("missing.onnx"), Model("tinycnn_converted.onnx")) +
           Entry("good2", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"));
  }

  ProcessResult Batch(std::vector<std::string> args) {
    args.insert(args.begin(), "batch");
    return Convgate(args);
  }

  std::map<std::string, std::vector<store::HistoryRow>> StoreJobs() {
    std::map<std::string, std::vector<store::HistoryRow>> by_id;
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({url_});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return by_id;
    Result<std::vector<store::HistoryRow>> rows = (*opened)->Jobs({});
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    if (!rows.ok()) return by_id;
    for (const store::HistoryRow& row : *rows) by_id[row.job.entry_id].push_back(row);
    return by_id;
  }

  // url_ with a password: the fixture's cluster trusts local connections and never asks for it,
  // so the URL works and the password can only leak by being printed.
  std::string UrlWithPassword() const {
    const std::string scheme = "postgresql://";
    return scheme + "postgres:Top5ecret@" + url_.substr(scheme.size());
  }

  std::unique_ptr<store::testing::TestBackend> backend_;
  std::string url_;
};

TEST_F(BatchPostgresCliTest, BatchWritesEveryJobOnceAndHistoryReadsIt) {
  Write("m.yaml", MixedManifest());
  const std::string url = UrlWithPassword();
  ProcessResult r = Batch({Path("m.yaml"), "--store", url, "--out", Path("out"), "-j", "2"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);  // a gate failed
  EXPECT_NE(r.out.find("entries 4: 2 passed, 1 failed, 1 error (missing-file 1)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("postgres:***@"), std::string::npos) << r.out;

  auto jobs = StoreJobs();
  ASSERT_EQ(jobs.size(), 4u);
  for (const auto& [id, rows] : jobs) EXPECT_EQ(rows.size(), 1u) << id;
  EXPECT_EQ(jobs["good"].at(0).job.verdict, Verdict::kPass);
  EXPECT_EQ(jobs["good"].at(0).job.model_sha256.size(), 64u);
  EXPECT_EQ(jobs["perturbed"].at(0).job.verdict, Verdict::kFail);
  EXPECT_GT(jobs["perturbed"].at(0).max_abs_error.value_or(0), 1e-3);
  EXPECT_EQ(jobs["missing"].at(0).job.error_category, "missing-file");

  ProcessResult history = Convgate({"history", "--store", url, "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json latest = json::parse(history.out);
  ASSERT_EQ(latest.size(), 4u);
  std::vector<std::string> ids;
  for (const json& row : latest) ids.push_back(row["entry_id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"good", "good2", "missing", "perturbed"}));
  ProcessResult table = Convgate({"history", "--store", url_, "goo*"});
  ASSERT_EQ(table.exit_code, 0) << Describe(table);
  EXPECT_NE(table.out.find("good2"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("perturbed"), std::string::npos) << table.out;

  // The password is nowhere: not printed, not in summary.json, not in the recorded command line.
  std::ifstream summary(dir_ / "out/summary.json");
  const std::string summary_text((std::istreambuf_iterator<char>(summary)),
                                 std::istreambuf_iterator<char>());
  for (const std::string* text :
       std::vector<const std::string*>{&r.out, &r.err, &history.out, &history.err, &summary_text}) {
    EXPECT_EQ(text->find("Top5ecret"), std::string::npos) << *text;
  }
  pqxx::connection connection(url_);
  pqxx::nontransaction txn(connection);
  const std::string argv = txn.exec1("SELECT argv FROM runs")[0].c_str();
  EXPECT_EQ(argv.find("Top5ecret"), std::string::npos) << argv;
  EXPECT_NE(argv.find("postgres:***@"), std::string::npos) << argv;
}

TEST_F(BatchPostgresCliTest, ResumeSkipsTheVerdictsTheServerHolds) {
  Write("m.yaml", MixedManifest());
  ASSERT_EQ(Batch({Path("m.yaml"), "--store", url_, "--out", Path("out"), "-j", "2", "--quiet"})
                .exit_code,
            1);
  // One more entry appended: only it runs.
  Write("m.yaml",
        MixedManifest() + Entry("good3", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ProcessResult again =
      Batch({Path("m.yaml"), "--store", url_, "--out", Path("out"), "-j", "2", "--resume"});
  ASSERT_EQ(again.exit_code, 1) << Describe(again);  // the recorded failure still counts
  // The error is no verdict: it runs again.
  EXPECT_NE(again.out.find("1 passed, 0 failed, 1 error (missing-file 1), 3 skipped as done"),
            std::string::npos)
      << again.out;
  auto jobs = StoreJobs();
  ASSERT_EQ(jobs.size(), 5u);
  for (const auto& [id, rows] : jobs) {
    EXPECT_EQ(rows.size(), id == "missing" ? 2u : 1u) << id;
  }
  ProcessResult skipped =
      Batch({Path("m.yaml"), "--store", url_, "--out", Path("out"), "--resume", "--skip-errors"});
  ASSERT_EQ(skipped.exit_code, 1) << Describe(skipped);
  EXPECT_NE(skipped.out.find("0 passed, 0 failed, 0 errors, 5 skipped as done"), std::string::npos)
      << skipped.out;
}

// Two batches at once (two shards, as two machines would run them) into one database.
TEST_F(BatchPostgresCliTest, TwoShardProcessesAtOnceRecordEveryEntryOnce) {
  std::string manifest = "models:\n";
  for (int model_idx = 0; model_idx < 6; ++model_idx) {
    manifest += Entry("m" + std::to_string(model_idx), Model("tinycnn.onnx"),
                      Model("tinycnn_converted.onnx"));
  }
  Write("m.yaml", manifest);
  std::vector<testing::StartedProcess> shards;
  for (const std::string shard : {"0/2", "1/2"}) {
    shards.push_back(
        testing::StartProcess({Binary().string(), "batch", Path("m.yaml"), "--store", url_, "--out",
                               Path("out" + shard.substr(0, 1)), "--shard", shard, "--quiet"}));
    ASSERT_GT(shards.back().pid, 0);
  }
  for (const testing::StartedProcess& shard : shards) {
    ProcessResult r = testing::WaitProcess(shard);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
  }
  auto jobs = StoreJobs();
  ASSERT_EQ(jobs.size(), 6u);
  std::set<int64_t> runs;
  for (const auto& [id, rows] : jobs) {
    ASSERT_EQ(rows.size(), 1u) << id;
    EXPECT_EQ(rows[0].job.verdict, Verdict::kPass) << id;
    runs.insert(rows[0].run_id);
  }
  EXPECT_EQ(runs.size(), 2u);
}

TEST_F(BatchPostgresCliTest, RegressionsComeFromTheServer) {
  Write("m.yaml",
        "models:\n" + Entry("cnn", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--store", url_, "--out", Path("out")}).exit_code, 0);
  ProcessResult none = Convgate({"history", "--store", url_, "--regressions"});
  EXPECT_EQ(none.exit_code, 0) << Describe(none);
  Write("m.yaml",
        "models:\n" + Entry("cnn", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--store", url_, "--out", Path("out")}).exit_code, 1);
  ProcessResult found = Convgate({"history", "--store", url_, "--regressions"});
  EXPECT_EQ(found.exit_code, 1) << Describe(found);
  EXPECT_NE(found.out.find("REGRESSION cnn: passed in run 1"), std::string::npos) << found.out;
}

TEST_F(BatchPostgresCliTest, UnreachableServerIsExit3NamingItWithoutThePassword) {
  Write("m.yaml",
        "models:\n" + Entry("cnn", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  const std::string url = "postgresql://ci:Top5ecret@/convgate?host=" + Path("no-server");
  ProcessResult batch = Batch({Path("m.yaml"), "--store", url, "--out", Path("out")});
  EXPECT_EQ(batch.exit_code, 3) << Describe(batch);
  EXPECT_NE(batch.err.find("postgresql://ci:***@/convgate?host=" + Path("no-server")),
            std::string::npos)
      << batch.err;
  EXPECT_EQ(batch.err.find("Top5ecret"), std::string::npos) << batch.err;
  EXPECT_FALSE(fs::exists(dir_ / "out/cnn")) << "no job may run without a store";
  ProcessResult history = Convgate({"history", "--store", url});
  EXPECT_EQ(history.exit_code, 3) << Describe(history);
  EXPECT_EQ(history.err.find("Top5ecret"), std::string::npos) << history.err;
}

TEST_F(BatchPostgresCliTest, NewerSchemaOnTheServerIsExit3) {
  ASSERT_TRUE(store::Store::Open({url_}).ok());
  backend_->SetSchemaVersion(url_, 7);
  ProcessResult history = Convgate({"history", "--store", url_});
  EXPECT_EQ(history.exit_code, 3) << Describe(history);
  EXPECT_NE(history.err.find("schema version 7"), std::string::npos) << history.err;
}

}  // namespace
}  // namespace convgate
