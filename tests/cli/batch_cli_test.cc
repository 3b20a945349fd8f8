// `convgate batch` and `convgate history` on the real binary: a manifest of passing, failing,
// missing and corrupt entries; -j 2; --resume; a hanging job killed by --timeout; kill -9 of the
// batch mid-run, then --resume: every entry recorded exactly once.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
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
const std::string kHang = (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/hang.py").string();

class BatchCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    std::ofstream(dir_ / "corrupt.onnx") << "\x08\x07 this is not an ONNX model \xff\xff\xff";
  }

  std::string Model(const std::string& name) const { return (kExamples / name).string(); }

  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  // A YAML entry verifying tinycnn against one of its bundled conversions.
  std::string Entry(const std::string& id, const std::string& source, const std::string& target,
                    const std::string& extra = "") const {
    return "  - id: " + id + "\n    source: " + source + "\n    target: " + target + "\n" + extra;
  }

  // An entry whose target runs hang.py (an exec runner that never answers).
  std::string HangEntry(const std::string& id, const std::string& timeout) const {
    return Entry(id, Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"),
                 "    timeout: " + timeout + "\n    flags: [--target-exec, \"/usr/bin/python3 " +
                     kHang + " " + Path(id + ".pid") + " {model} {inputs} {outputs}\"]\n");
  }

  std::string MixedManifest() const {
    return "models:\n" + Entry("good", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")) +
           Entry("perturbed", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")) +
           Entry("missing", Path("missing.onnx"), Model("tinycnn_converted.onnx")) +
           Entry("corrupt", Path("corrupt.onnx"), Model("tinycnn_converted.onnx"));
  }

  ProcessResult Batch(std::vector<std::string> args) {
    args.insert(args.begin(), "batch");
    return Convgate(args);
  }

  json ReadJson(const fs::path& path) const {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "missing " << path;
    return in.good() ? json::parse(in) : json::object();
  }

  // Every job row in the store, by entry id.
  std::map<std::string, std::vector<store::HistoryRow>> StoreJobs(const std::string& db) {
    std::map<std::string, std::vector<store::HistoryRow>> by_id;
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({db});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return by_id;
    Result<std::vector<store::HistoryRow>> rows = (*opened)->Jobs({});
    EXPECT_TRUE(rows.ok());
    if (!rows.ok()) return by_id;
    for (const store::HistoryRow& row : *rows) by_id[row.job.entry_id].push_back(row);
    return by_id;
  }
};

TEST_F(BatchCliTest, MixedManifestGivesVerdictsSummaryAndStoreRows) {
  Write("m.yaml", MixedManifest());
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "-j", "2"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);  // a gate failed
  EXPECT_NE(r.out.find("entries 4: 1 passed, 1 failed, 2 errors (corrupt-file 1, missing-file 1), "
                       "0 skipped as done"),
            std::string::npos)
      << r.out;
  const json summary = ReadJson(dir_ / "out/summary.json");
  EXPECT_EQ(summary["passed"], 1);
  EXPECT_EQ(summary["failed"], 1);
  EXPECT_EQ(summary["errors"], 2);
  EXPECT_EQ(summary["exit_code"], 1);
  EXPECT_TRUE(fs::exists(dir_ / "out/good/verify_result.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out/perturbed/report.json"));
  // Two jobs at once share the cores: each job's command line carries its share of threads.
  const json argv = ReadJson(dir_ / "out/perturbed/report.json")["argv"];
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string threads = std::to_string(std::max(1, cores / 2));
  bool found = false;
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    found = found || (argv[i] == "--threads" && argv[i + 1] == threads);
  }
  EXPECT_TRUE(found) << argv.dump();

  auto jobs = StoreJobs(Path("out/convgate.db"));
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs["good"].at(0).job.verdict, Verdict::kPass);
  EXPECT_EQ(jobs["good"].at(0).job.model_type, "image-classification");
  EXPECT_EQ(jobs["good"].at(0).job.model_type_source, "graph");
  EXPECT_EQ(jobs["good"].at(0).job.model_sha256.size(), 64u);
  EXPECT_EQ(jobs["perturbed"].at(0).job.verdict, Verdict::kFail);
  EXPECT_EQ(jobs["perturbed"].at(0).job.exit_code, 1);
  EXPECT_GT(jobs["perturbed"].at(0).max_abs_error.value_or(0), 1e-3);
  EXPECT_EQ(jobs["missing"].at(0).job.error_category, "missing-file");
  EXPECT_NE(jobs["missing"].at(0).job.error_text.find("missing.onnx"), std::string::npos);
  EXPECT_EQ(jobs["corrupt"].at(0).job.error_category, "corrupt-file");

  // history: the latest verdict of each entry, as JSON.
  ProcessResult history = Convgate({"history", "--store", Path("out/convgate.db"), "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json latest = json::parse(history.out);
  ASSERT_EQ(latest.size(), 4u);
  ProcessResult glob = Convgate({"history", "--store", Path("out/convgate.db"), "pert*"});
  ASSERT_EQ(glob.exit_code, 0) << Describe(glob);
  EXPECT_NE(glob.out.find("perturbed"), std::string::npos);
  EXPECT_EQ(glob.out.find("good"), std::string::npos) << glob.out;
}

// Issue 27, item 5: a batch result is re-judged as a whole: `check DIR` (or its summary.json)
// re-judges every job's report under the new policy, says what each was and is, exits by the
// worst, and with --out writes each job's re-judged result files.
TEST_F(BatchCliTest, CheckReJudgesEveryJobOfABatchFolder) {
  Write("m.yaml", "models:\n" +
                      Entry("good", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")) +
                      Entry("perturbed", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--out", Path("out")}).exit_code, 1);

  ProcessResult same = Convgate({"check", Path("out")});
  EXPECT_EQ(same.exit_code, 1) << Describe(same);
  EXPECT_NE(same.out.find("2 jobs of " + Path("out/summary.json") + " re-judged"),
            std::string::npos)
      << same.out;
  EXPECT_NE(same.out.find("0 of 2 verdicts changed"), std::string::npos) << same.out;

  ProcessResult loose = Convgate(
      {"check", Path("out/summary.json"), "--atol", "10", "--json", "--out", Path("rejudged")});
  ASSERT_EQ(loose.exit_code, 0) << Describe(loose);
  const json rows = json::parse(loose.out);
  ASSERT_EQ(rows.size(), 2u) << loose.out;
  // Jobs are listed as they finished (two ran at once): found by id.
  const json& perturbed = rows[0]["id"] == "perturbed" ? rows[0] : rows[1];
  EXPECT_EQ(perturbed["id"], "perturbed") << loose.out;
  EXPECT_EQ(perturbed["was"], "fail");
  EXPECT_EQ(perturbed["now"], "pass");
  const json rejudged = ReadJson(dir_ / "rejudged/perturbed/report.json");
  EXPECT_EQ(rejudged["verdict"], "pass");
  EXPECT_EQ(rejudged["rejudged_from"], Path("out/perturbed/report.json"));

  // A job that stopped with an error has nothing to re-judge: exit 3, saying why.
  Write("mixed.yaml", MixedManifest());
  ASSERT_EQ(Batch({Path("mixed.yaml"), "--out", Path("mixed")}).exit_code, 1);
  ProcessResult mixed = Convgate({"check", Path("mixed"), "--atol", "10"});
  EXPECT_EQ(mixed.exit_code, 3) << Describe(mixed);
  EXPECT_NE(mixed.out.find("nothing was compared, so nothing can be re-judged"), std::string::npos)
      << mixed.out;
  ProcessResult not_batch = Convgate({"check", Path("m.yaml")});
  EXPECT_EQ(not_batch.exit_code, 3) << Describe(not_batch);
}

// An error is not a verdict: --resume skips the entries that passed or failed and runs the ones
// whose latest job is an error again (recorded again); --skip-errors skips those too.
TEST_F(BatchCliTest, ResumeRunsErroredEntriesAgainUnlessSkipErrors) {
  Write("m.yaml", MixedManifest());
  ASSERT_EQ(Batch({Path("m.yaml"), "--out", Path("out"), "-j", "2", "--quiet"}).exit_code, 1);
  ProcessResult again = Batch({Path("m.yaml"), "--out", Path("out"), "--resume"});
  // The recorded failure still decides the exit code.
  ASSERT_EQ(again.exit_code, 1) << Describe(again);
  EXPECT_NE(again.out.find("0 passed, 0 failed, 2 errors (corrupt-file 1, missing-file 1), "
                           "2 skipped as done"),
            std::string::npos)
      << again.out;
  auto jobs = StoreJobs(Path("out/convgate.db"));
  EXPECT_EQ(jobs["good"].size(), 1u);
  EXPECT_EQ(jobs["perturbed"].size(), 1u);
  EXPECT_EQ(jobs["missing"].size(), 2u);
  EXPECT_EQ(jobs["corrupt"].size(), 2u);

  ProcessResult skipped =
      Batch({Path("m.yaml"), "--out", Path("out"), "--resume", "--skip-errors"});
  ASSERT_EQ(skipped.exit_code, 1) << Describe(skipped);
  EXPECT_NE(skipped.out.find("0 passed, 0 failed, 0 errors, 4 skipped as done"), std::string::npos)
      << skipped.out;
  for (const auto& [id, rows] : StoreJobs(Path("out/convgate.db"))) {
    EXPECT_EQ(rows.size(), id == "missing" || id == "corrupt" ? 2u : 1u) << id;
  }
  // Without the errors, the recorded failure decides; with only errors skipped, exit 3.
  Write("errors.yaml",
        "models:\n" + Entry("missing", Path("missing.onnx"), Model("tinycnn_converted.onnx")));
  ProcessResult only_errors =
      Batch({Path("errors.yaml"), "--out", Path("out"), "--resume", "--skip-errors"});
  EXPECT_EQ(only_errors.exit_code, 3) << Describe(only_errors);
  EXPECT_NE(only_errors.out.find("1 skipped as done"), std::string::npos) << only_errors.out;
  // --skip-errors says what --resume skips: alone it is a usage error.
  ProcessResult alone = Batch({Path("m.yaml"), "--out", Path("out"), "--skip-errors"});
  EXPECT_EQ(alone.exit_code, 2) << Describe(alone);
  EXPECT_NE(alone.err.find("--resume"), std::string::npos) << alone.err;
}

TEST_F(BatchCliTest, JsonAndTextManifestsOfTheReferencePipeline) {
  fs::copy_file(Model("tinycnn.onnx"), dir_ / "bert-tiny.onnx");
  Write("models.json",
        "[\n  {\"model_id\": \"bert-tiny\", \"file_path\": \"bert-tiny.onnx\", "
        "\"model_type\": \"bert\"},\n  {\"model_id\": \"t5-small\", \"file_path\": "
        "\"t5-small/model.onnx\"}\n]\n");
  // t5-small/model.onnx is not beside the manifest, so it is the file model.onnx... of the hub
  // repository t5-small: offline, with an empty cache, it is missing without any request.
  ProcessResult r =
      testing::RunProcess({"/usr/bin/env", "HF_HUB_OFFLINE=1", "HF_HUB_CACHE=" + Path("hf-cache"),
                           Binary().string(), "batch", Path("models.json"), "--out", Path("out")});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);  // t5-small is missing
  auto jobs = StoreJobs(Path("out/convgate.db"));
  EXPECT_EQ(jobs["bert-tiny"].at(0).job.verdict, Verdict::kPass);
  EXPECT_EQ(jobs["bert-tiny"].at(0).job.model_type_source, "manifest");
  EXPECT_EQ(jobs["t5-small"].at(0).job.error_category, "missing-file");
  EXPECT_NE(jobs["t5-small"].at(0).job.error_text.find(
                "hf://t5-small@main/t5-small/model.onnx: HF_HUB_OFFLINE is set and "
                "'t5-small/model.onnx' of "
                "t5-small at main is not in the cache"),
            std::string::npos)
      << jobs["t5-small"].at(0).job.error_text;
  EXPECT_EQ(jobs["t5-small"].at(0).job.model_type, "t5");
  EXPECT_EQ(jobs["t5-small"].at(0).job.model_type_source, "name");

  Write("models.txt", "# one model per line\n" + Model("tinycnn.onnx") + "\n");
  ProcessResult text = Batch({Path("models.txt"), "--out", Path("out_text")});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
}

TEST_F(BatchCliTest, ManifestErrorsAreUsageErrorsBeforeAnyJob) {
  Write("bad.yaml", "models:\n  - source: a.onnx\n  - source: a.onnx\n");
  ProcessResult r = Batch({Path("bad.yaml"), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("bad.yaml:3: entry 'a': duplicate id"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out/convgate.db"));
  ProcessResult shard = Batch({Path("bad.yaml"), "--shard", "4/4"});
  EXPECT_EQ(shard.exit_code, 2) << Describe(shard);
}

TEST_F(BatchCliTest, NewerStoreSchemaIsRefused) {
  Write("m.yaml",
        "models:\n" + Entry("good", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--out", Path("out")}).exit_code, 0);
  {
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({Path("out/convgate.db")});
    ASSERT_TRUE(opened.ok());
  }
  // Written by a newer convgate: sqlite3's PRAGMA through the test's own connection.
  ProcessResult set = testing::RunProcess(
      {"/usr/bin/python3", "-c",
       "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=7'); "
       "c.commit()",
       Path("out/convgate.db")});
  ASSERT_EQ(set.exit_code, 0) << Describe(set);
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("schema version 7"), std::string::npos) << r.err;
  ProcessResult history = Convgate({"history", "--store", Path("out/convgate.db")});
  EXPECT_EQ(history.exit_code, 3) << Describe(history);
}

TEST_F(BatchCliTest, HistoryFindsRegressions) {
  Write("m.yaml",
        "models:\n" + Entry("cnn", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--out", Path("out")}).exit_code, 0);
  ProcessResult none = Convgate({"history", "--store", Path("out/convgate.db"), "--regressions"});
  EXPECT_EQ(none.exit_code, 0) << Describe(none);
  // The nightly conversion changed: same entry, a broken target.
  Write("m.yaml",
        "models:\n" + Entry("cnn", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")));
  ASSERT_EQ(Batch({Path("m.yaml"), "--out", Path("out")}).exit_code, 1);
  ProcessResult found = Convgate({"history", "--store", Path("out/convgate.db"), "--regressions"});
  EXPECT_EQ(found.exit_code, 0 + 1) << Describe(found);
  EXPECT_NE(found.out.find("REGRESSION cnn: passed in run 1"), std::string::npos) << found.out;
  ProcessResult bad_since =
      Convgate({"history", "--store", Path("out/convgate.db"), "--since", "yesterday"});
  EXPECT_EQ(bad_since.exit_code, 2) << Describe(bad_since);
}

TEST_F(BatchCliTest, HangingJobIsKilledByTimeout) {
  Write("m.yaml", "models:\n" + HangEntry("hang", "2s") +
                      Entry("good", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "-j", "2"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_LT(seconds, 30.0);
  auto jobs = StoreJobs(Path("out/convgate.db"));
  EXPECT_EQ(jobs["hang"].at(0).job.error_category, "timeout");
  EXPECT_NE(jobs["hang"].at(0).job.error_text.find("timed out"), std::string::npos);
  EXPECT_EQ(jobs["good"].at(0).job.verdict, Verdict::kPass);
  // The runner the job started died with it.
  const pid_t runner = testing::ReadPidFile(Path("hang.pid"));
  ASSERT_GT(runner, 0);
  EXPECT_TRUE(testing::WaitFor([&] { return !testing::ProcessIsRunning(runner); }, 60.0))
      << "waited 60 s for the runner (pid " << runner << ") to end with its job";
}

TEST_F(BatchCliTest, KillNineThenResumeRecordsEveryEntryExactlyOnce) {
  const std::string good = Model("tinycnn_converted.onnx");
  Write("m.yaml", "models:\n" + Entry("a", Model("tinycnn.onnx"), good) +
                      Entry("b", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx")) +
                      HangEntry("c", "3s") + Entry("d", Model("tinycnn.onnx"), good) +
                      Entry("e", Model("tinycnn.onnx"), good));
  const std::vector<std::string> argv = {
      Binary().string(), "batch", Path("m.yaml"), "--out", Path("out"), "-j", "1"};
  testing::StartedProcess batch = testing::StartProcess(argv);
  ASSERT_GT(batch.pid, 0);
  // Entry c runs (its runner wrote its pid): a and b are done, d and e are not.
  ASSERT_TRUE(testing::WaitFor([&] { return testing::ReadPidFile(Path("c.pid")) > 0; }, 120.0))
      << "waited 120 s for the job's runner to write " << Path("c.pid");
  ::kill(batch.pid, SIGKILL);
  ProcessResult killed = testing::WaitProcess(batch);
  EXPECT_EQ(killed.signal, SIGKILL);
  const pid_t runner = testing::ReadPidFile(Path("c.pid"));
  EXPECT_TRUE(testing::WaitFor([&] { return !testing::ProcessIsRunning(runner); }, 60.0))
      << "waited 60 s for the runner (pid " << runner << ") to end with its job";
  {
    auto jobs = StoreJobs(Path("out/convgate.db"));
    EXPECT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs.count("a"), 1u);
    EXPECT_EQ(jobs.count("b"), 1u);
  }
  fs::remove(Path("c.pid"));
  ProcessResult resumed = Batch({Path("m.yaml"), "--out", Path("out"), "-j", "1", "--resume"});
  EXPECT_EQ(resumed.exit_code, 1) << Describe(resumed);  // b failed (recorded before the kill)
  EXPECT_NE(resumed.out.find("2 skipped as done"), std::string::npos) << resumed.out;
  auto jobs = StoreJobs(Path("out/convgate.db"));
  ASSERT_EQ(jobs.size(), 5u);
  for (const auto& [id, rows] : jobs) EXPECT_EQ(rows.size(), 1u) << id;
  EXPECT_EQ(jobs["a"].at(0).run_id, jobs["b"].at(0).run_id);
  EXPECT_NE(jobs["a"].at(0).run_id, jobs["d"].at(0).run_id);
  EXPECT_EQ(jobs["c"].at(0).job.error_category, "timeout");
}

TEST_F(BatchCliTest, SigtermStopsTheBatchAndRecordsNoUnfinishedJob) {
  Write("m.yaml", "models:\n" + Entry("a", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")) +
                      HangEntry("b", "60s"));
  testing::StartedProcess batch = testing::StartProcess(
      {Binary().string(), "batch", Path("m.yaml"), "--out", Path("out"), "-j", "1"});
  ASSERT_GT(batch.pid, 0);
  ASSERT_TRUE(testing::WaitFor([&] { return testing::ReadPidFile(Path("b.pid")) > 0; }, 120.0))
      << "waited 120 s for the job's runner to write " << Path("b.pid");
  ::kill(batch.pid, SIGTERM);
  ProcessResult stopped = testing::WaitProcess(batch);
  EXPECT_EQ(stopped.exit_code, 143) << Describe(stopped);
  EXPECT_NE(stopped.out.find("BATCH INTERRUPTED"), std::string::npos) << stopped.out;
  const pid_t runner = testing::ReadPidFile(Path("b.pid"));
  EXPECT_TRUE(testing::WaitFor([&] { return !testing::ProcessIsRunning(runner); }, 60.0))
      << "waited 60 s for the runner (pid " << runner << ") to end with its job";
  auto jobs = StoreJobs(Path("out/convgate.db"));
  EXPECT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs.count("a"), 1u);
}

TEST_F(BatchCliTest, ShardsIntoOneStoreRecordEveryEntryOnce) {
  std::string manifest = "models:\n";
  for (int model_idx = 0; model_idx < 8; ++model_idx) {
    manifest += Entry("m" + std::to_string(model_idx), Model("tinycnn.onnx"),
                      Model("tinycnn_converted.onnx"));
  }
  Write("m.yaml", manifest);
  int entries = 0;
  for (const std::string shard : {"0/3", "1/3", "2/3"}) {
    ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "--shard", shard, "--store",
                             Path("shared.db"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const json summary = json::parse(r.out);
    EXPECT_EQ(summary["manifest_entries"], 8);
    entries += summary["entries"].get<int>();
  }
  EXPECT_EQ(entries, 8);
  auto jobs = StoreJobs(Path("shared.db"));
  ASSERT_EQ(jobs.size(), 8u);
  for (const auto& [id, rows] : jobs) EXPECT_EQ(rows.size(), 1u) << id;
}

}  // namespace
}  // namespace convgate
