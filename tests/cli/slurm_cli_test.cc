// `convgate batch --slurm` on a real single-host Slurm cluster (the slurm fixture:
// scripts/services/slurm.sh, SLURM_CONF from the test's environment): a manifest of 13 entries as
// a 4-task array into one store, every entry recorded exactly once and the merged summary equal
// to a local `-j 2` batch of the same manifest; --no-wait; a task killed mid-shard (missing
// entries, exit 3, its state and log tail); sbatch missing or refusing the job.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "convgate/batch/manifest.h"
#include "convgate/batch/slurm_summary.h"
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
const std::string kKillBatch =
    (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/kill_batch.py").string();

class SlurmCliTest : public testing::CliTest {
 protected:
  std::unique_ptr<store::testing::TestBackend> backend_;
  std::string url_;

  void SetUp() override {
    const char* conf = std::getenv("SLURM_CONF");
    ASSERT_TRUE(conf != nullptr && fs::exists(conf))
        << "SLURM_CONF does not name the slurm fixture's slurm.conf; run through ctest";
    CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    std::ofstream(dir_ / "corrupt.onnx") << "\x08\x07 this is not an ONNX model \xff\xff\xff";
  }

  void TearDown() override {
    if (backend_ != nullptr) backend_->Cleanup();
    CliTest::TearDown();
  }

  // The shared store every task writes: a database of its own per test on the throwaway
  // PostgreSQL cluster of the postgres fixture, as a fleet would use (entries built from the
  // shared example models have the same keys in every test, so one database would mix them).
  std::string StoreUrl() {
    if (url_.empty()) {
      backend_ = store::testing::MakePostgresTestBackend(CONVGATE_TEST_PG_URL);
      url_ = backend_->FreshLocation(
          std::string("slurm_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    }
    return url_;
  }

  std::string Model(const std::string& name) const { return (kExamples / name).string(); }

  std::string Entry(const std::string& id, const std::string& source, const std::string& target,
                    const std::string& extra = "") const {
    return "  - id: " + id + "\n    source: " + source + "\n    target: " + target + "\n" + extra;
  }

  // 13 entries over copies of tinycnn: passes, gate failures (a perturbed, a NaN and a wrongly
  // shaped target), a missing and a corrupt file.
  std::string FleetManifest() {
    std::string manifest = "models:\n";
    for (int model_idx = 0; model_idx < 8; ++model_idx) {
      const std::string copy = Path("cnn" + std::to_string(model_idx) + ".onnx");
      fs::copy_file(Model("tinycnn.onnx"), copy, fs::copy_options::overwrite_existing);
      manifest += Entry("cnn" + std::to_string(model_idx), copy, Model("tinycnn_converted.onnx"));
    }
    manifest += Entry("perturbed", Model("tinycnn.onnx"), Model("tinycnn_perturbed.onnx"));
    manifest += Entry("nan", Model("tinycnn.onnx"), Model("tinycnn_nan.onnx"));
    manifest += Entry("badshape", Model("tinycnn.onnx"), Model("tinycnn_badshape.onnx"));
    manifest += Entry("missing", Path("missing.onnx"), Model("tinycnn_converted.onnx"));
    manifest += Entry("corrupt", Path("corrupt.onnx"), Model("tinycnn_converted.onnx"));
    return manifest;
  }

  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  ProcessResult Batch(std::vector<std::string> args) {
    args.insert(args.begin(), "batch");
    return Convgate(args);
  }

  // The array's tasks as squeue lists them ("%K|%T" lines).
  static std::string Squeue(const std::string& job_id) {
    ProcessResult r =
        testing::RunProcess({"/usr/bin/squeue", "-h", "-j", job_id, "-t", "all", "-o", "%K|%T"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.out;
  }
  // Every task listed has ended (an array squeue does not list has not: the tests read it well
  // within the cluster's MinJobAge).
  static bool ArrayEnded(const std::string& job_id) {
    const std::vector<batch::SlurmTaskState> tasks = batch::ParseSqueue(Squeue(job_id));
    if (tasks.empty()) return false;
    for (const batch::SlurmTaskState& task : tasks) {
      if (!batch::SlurmStateIsFinal(task.state)) return false;
    }
    return true;
  }

  // How many job rows each entry of `manifest` has in `store_url`, by its resume key.
  std::map<std::string, int64_t> RowsPerEntry(const std::string& manifest,
                                              const std::string& store_url) {
    std::map<std::string, int64_t> rows;
    Result<batch::Manifest> read = batch::ReadManifest(manifest);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({store_url});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!read.ok() || !opened.ok()) return rows;
    const std::vector<std::string> keys = batch::ManifestEntryKeys(*read);
    for (size_t entry_idx = 0; entry_idx < keys.size(); ++entry_idx) {
      Result<int64_t> count = (*opened)->CountJobs(keys[entry_idx]);
      EXPECT_TRUE(count.ok());
      rows[read->entries[entry_idx].id] = count.ok() ? *count : -1;
    }
    return rows;
  }
};

TEST_F(SlurmCliTest, FourTaskArrayRecordsEveryEntryOnceAndMatchesALocalBatch) {
  Write("fleet.yaml", FleetManifest());
  ProcessResult slurm = Batch({Path("fleet.yaml"), "--slurm", "--tasks", "4", "--store", StoreUrl(),
                               "--out", Path("out"), "--json"});
  ASSERT_EQ(slurm.exit_code, 1) << Describe(slurm);  // gate failures
  const json merged = json::parse(slurm.out);
  EXPECT_EQ(merged["tasks"], 4);
  EXPECT_EQ(merged["entries"], 13);
  EXPECT_TRUE(merged["missing"].empty()) << merged.dump(2);
  EXPECT_TRUE(merged["task_problems"].empty()) << merged.dump(2);
  EXPECT_EQ(merged["task_states"].size(), 4u) << merged.dump(2);
  // A server store needs no warning about shared filesystems (the SQLite test below has it).
  EXPECT_EQ(slurm.err.find("every Slurm node must see it"), std::string::npos) << slurm.err;
  EXPECT_NE(slurm.err.find("13/13 entries recorded"), std::string::npos) << slurm.err;

  // The script the user can read, and the tasks' logs beside it.
  std::ifstream script(dir_ / "out/slurm/batch.sbatch");
  const std::string script_text((std::istreambuf_iterator<char>(script)), {});
  EXPECT_NE(script_text.find("#SBATCH --array=0-3"), std::string::npos) << script_text;
  EXPECT_NE(script_text.find("--shard \"$SLURM_ARRAY_TASK_ID/4\""), std::string::npos);
  const std::string job_id = merged["slurm_job"];
  for (int task = 0; task < 4; ++task) {
    EXPECT_TRUE(fs::exists(dir_ / ("out/slurm/" + job_id + "_" + std::to_string(task) + ".log")))
        << task;
  }

  for (const auto& [id, rows] : RowsPerEntry(Path("fleet.yaml"), StoreUrl())) {
    EXPECT_EQ(rows, 1) << id;
  }

  ProcessResult local = Batch({Path("fleet.yaml"), "-j", "2", "--store", Path("local.db"), "--out",
                               Path("local"), "--json", "--quiet"});
  ASSERT_EQ(local.exit_code, 1) << Describe(local);
  const json alone = json::parse(local.out);
  EXPECT_EQ(merged["passed"], alone["passed"]);
  EXPECT_EQ(merged["failed"], alone["failed"]);
  EXPECT_EQ(merged["errors"], alone["errors"]);
  EXPECT_EQ(merged["errors_by_category"], alone["errors_by_category"]);
  EXPECT_EQ(merged["exit_code"], alone["exit_code"]);
  EXPECT_EQ(merged["passed"], 8);
  EXPECT_EQ(merged["failed"], 3);  // perturbed, nan, and badshape's outputs do not match either
  EXPECT_EQ(merged["errors_by_category"], json({{"corrupt-file", 1}, {"missing-file", 1}}));
  // Verdict by verdict, entry by entry.
  std::map<std::string, std::string> slurm_verdicts;
  std::map<std::string, std::string> local_verdicts;
  for (const json& job : merged["jobs"]) slurm_verdicts[job["id"]] = job["verdict"];
  for (const json& job : alone["jobs"]) local_verdicts[job["id"]] = job["verdict"];
  EXPECT_EQ(slurm_verdicts, local_verdicts);
}

TEST_F(SlurmCliTest, RelativePathsGiveTheKeysTheTasksRecord) {
  // Given relative to the working directory, as a user types them: the tasks get absolute paths,
  // and the summary must still find every entry they recorded.
  std::string manifest = "models:\n";
  for (const std::string id : {"a", "b", "c"}) {
    fs::copy_file(Model("tinycnn.onnx"), dir_ / (id + ".onnx"));
    manifest += Entry(id, id + ".onnx", Model("tinycnn_converted.onnx"));
  }
  Write("m.yaml", manifest);
  ProcessResult r =
      testing::RunProcess({"/usr/bin/env", "-C", dir_.string(), Binary().string(), "batch",
                           "m.yaml", "--slurm", "--store", "shared.db", "--out", "out", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // Three entries: three tasks by default (min(entries, 4)).
  EXPECT_NE(r.out.find(" 3 tasks, store " + Path("shared.db")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("entries 3: 3 passed, 0 failed, 0 errors, 0 missing"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("BATCH PASSED"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.find("entries recorded") == std::string::npos) << "--quiet: " << r.err;
  // A SQLite store is allowed, with the warning that every node must see it.
  EXPECT_NE(r.err.find("every Slurm node must see it"), std::string::npos) << r.err;
  // The merged summary.json replaces the tasks' own.
  std::ifstream in(dir_ / "out/summary.json");
  ASSERT_TRUE(in.good());
  EXPECT_EQ(json::parse(in)["entries"], 3);
  for (const auto& [id, rows] : RowsPerEntry(Path("m.yaml"), Path("shared.db"))) {
    EXPECT_EQ(rows, 1) << id;
  }
}

TEST_F(SlurmCliTest, NoWaitReturnsWithTheJobIdWhileTheArrayRuns) {
  Write("fleet.yaml", FleetManifest());
  ProcessResult r = Batch({Path("fleet.yaml"), "--slurm", "--tasks", "2", "--no-wait", "--store",
                           StoreUrl(), "--out", Path("out"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json submitted = json::parse(r.out);
  const std::string job_id = submitted["slurm_job"];
  // Tasks start a second or more after submission and each runs several verifications: when
  // convgate returned, the array had not ended.
  EXPECT_FALSE(ArrayEnded(job_id)) << Squeue(job_id);
  EXPECT_NE(submitted["history"].get<std::string>().find("convgate history --store"),
            std::string::npos);
  EXPECT_NE(submitted["resume"].get<std::string>().find("--resume"), std::string::npos);
  // The array finishes on its own, into the store.
  ASSERT_TRUE(testing::WaitFor([&] { return ArrayEnded(job_id); }, 300.0)) << Squeue(job_id);
  for (const auto& [id, rows] : RowsPerEntry(Path("fleet.yaml"), StoreUrl())) {
    EXPECT_EQ(rows, 1) << id;
  }
  ProcessResult history = Convgate({"history", "--store", StoreUrl(), "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  EXPECT_EQ(json::parse(history.out).size(), 13u);

  // Without --json: the job id and both commands.
  ProcessResult text = Batch({Path("fleet.yaml"), "--slurm", "--tasks", "2", "--no-wait", "--store",
                              StoreUrl(), "--out", Path("out2"), "--resume"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_NE(text.out.find("Slurm job "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("convgate history --store"), std::string::npos) << text.out;
  const std::string second = text.out.substr(10, text.out.find(' ', 10) - 10);
  ASSERT_TRUE(testing::WaitFor([&] { return ArrayEnded(second); }, 300.0)) << Squeue(second);
}

TEST_F(SlurmCliTest, TaskKilledMidShardLeavesMissingEntriesAndExit3) {
  // Entry "killer"'s runner kills its task's batch with SIGKILL; every other entry passes.
  std::string manifest = "models:\n";
  for (int model_idx = 0; model_idx < 11; ++model_idx) {
    manifest += Entry("cnn" + std::to_string(model_idx), Model("tinycnn.onnx"),
                      Model("tinycnn_converted.onnx"));
  }
  manifest += Entry("killer", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"),
                    "    flags: [--target-exec, \"/usr/bin/python3 " + kKillBatch +
                        " {model} {inputs} {outputs}\"]\n");
  Write("m.yaml", manifest);
  Result<batch::Manifest> parsed = batch::ReadManifest(Path("m.yaml"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const int killer_task = batch::ShardOfEntries(parsed->entries, 4).back();  // killer is last
  ProcessResult r = Batch({Path("m.yaml"), "--slurm", "--tasks", "4", "--store", StoreUrl(),
                           "--out", Path("out"), "--json"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  const json merged = json::parse(r.out);
  std::set<std::string> missing;
  for (const json& entry : merged["missing"]) {
    missing.insert(entry["id"].get<std::string>());
    EXPECT_EQ(entry["task"], killer_task) << entry.dump();
  }
  EXPECT_EQ(missing.count("killer"), 1u) << merged.dump(2);
  EXPECT_EQ(merged["passed"].get<int>() + static_cast<int>(missing.size()), 12) << merged.dump(2);
  ASSERT_EQ(merged["task_problems"].size(), 1u) << merged.dump(2);
  const json& problem = merged["task_problems"][0];
  EXPECT_EQ(problem["task"], killer_task);
  EXPECT_EQ(problem["state"], "FAILED") << problem.dump(2);
  EXPECT_EQ(problem["exit_code"], "0:9") << problem.dump(2);  // SIGKILL
  EXPECT_EQ(problem["missing"].get<size_t>(), missing.size());

  // The text form names the task, its state and where its log is.
  ProcessResult text = Batch({Path("m.yaml"), "--slurm", "--tasks", "4", "--store", StoreUrl(),
                              "--out", Path("out_text"), "--quiet"});
  ASSERT_EQ(text.exit_code, 3) << Describe(text);
  EXPECT_NE(text.out.find("task " + std::to_string(killer_task) + " ended FAILED, exit code 0:9"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("MISSING"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("BATCH ERRORS: entries are missing"), std::string::npos) << text.out;
}

TEST_F(SlurmCliTest, SbatchRefusingTheJobIsExit3WithItsMessage) {
  Write("m.yaml", "models:\n" + Entry("a", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ProcessResult r = Batch({Path("m.yaml"), "--slurm", "--sbatch-arg=--partition=nosuch", "--store",
                           StoreUrl(), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("sbatch refused the job array"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid partition specified: nosuch"), std::string::npos) << r.err;
}

TEST_F(SlurmCliTest, MissingSbatchIsExit3) {
  Write("m.yaml", "models:\n" + Entry("a", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  ProcessResult r =
      testing::RunProcess({"/usr/bin/env", "PATH=" + Path("empty-bin"), Binary().string(), "batch",
                           Path("m.yaml"), "--slurm", "--store", StoreUrl(), "--out", Path("out")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("sbatch is not on PATH"), std::string::npos) << r.err;
}

TEST_F(SlurmCliTest, FlagsThatDoNotGoWithSlurmAreUsageErrors) {
  Write("m.yaml", "models:\n" + Entry("a", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx")));
  const std::vector<std::vector<std::string>> cases = {
      {"--slurm", "--shard", "0/2"},
      {"--slurm", "-j", "2"},
      {"--tasks", "2"},
      {"--no-wait"},
      {"--slurm", "--sbatch-arg=--array=0-1"},
      {"--slurm", "--sbatch-arg=-o/tmp/x.log"},
      {"--slurm", "--sbatch-arg", "debug"},
  };
  for (const std::vector<std::string>& extra : cases) {
    std::vector<std::string> args = {Path("m.yaml"), "--out", Path("out")};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = Batch(args);
    EXPECT_EQ(r.exit_code, 2) << extra.front() << " " << extra.back() << "\n" << Describe(r);
  }
  EXPECT_FALSE(fs::exists(dir_ / "out/slurm")) << "nothing may be submitted on a usage error";
}

}  // namespace
}  // namespace convgate
