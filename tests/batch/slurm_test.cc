// The Slurm pieces of `convgate batch --slurm` without a cluster: the array script, the sbatch
// arguments refused, squeue's and scontrol's output as Slurm 22.05 prints it, and the summary
// merged from a store (SQLite :memory:) with missing entries and a task that died.
#include "convgate/batch/slurm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "convgate/batch/slurm_summary.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

SlurmArrayOptions Options() {
  SlurmArrayOptions options;
  options.convgate = "/opt/convgate/bin/convgate";
  options.manifest = "/shared/zoo/it's.yaml";
  options.out_dir = "/shared/out";
  options.store = "postgresql://ci@db/convgate";
  options.tasks = 4;
  return options;
}

TEST(SlurmTest, TaskCountDefaultsToAtMostFour) {
  EXPECT_EQ(SlurmTaskCount(0, 13), 4);
  EXPECT_EQ(SlurmTaskCount(0, 2), 2);
  EXPECT_EQ(SlurmTaskCount(0, 0), 1);
  EXPECT_EQ(SlurmTaskCount(6, 2), 6);
}

TEST(SlurmTest, ScriptRunsTheShardOfItsTaskWithAbsoluteQuotedPaths) {
  const std::string script = SbatchScript(Options());
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_THAT(script, HasSubstr("#SBATCH --array=0-3\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --output=/shared/out/slurm/%A_%a.log\n"));
  EXPECT_THAT(script, HasSubstr("exec '/opt/convgate/bin/convgate' batch "
                                "'/shared/zoo/it'\\''s.yaml' --shard \"$SLURM_ARRAY_TASK_ID/4\" "
                                "--store 'postgresql://ci@db/convgate' --out '/shared/out' "
                                "-j \"${SLURM_CPUS_PER_TASK:-1}\" --quiet\n"));
  EXPECT_THAT(script, ::testing::Not(HasSubstr("--resume")));
  SlurmArrayOptions resume = Options();
  resume.resume = true;
  resume.timeout_seconds = 90;
  EXPECT_THAT(SbatchScript(resume), HasSubstr("--quiet --resume --timeout 90s\n"));
  EXPECT_EQ(SlurmTaskLog("/shared/out", "42", 3), fs::path("/shared/out/slurm/42_3.log"));
}

TEST(SlurmTest, ScriptIsValidBash) {
  const fs::path path =
      fs::temp_directory_path() / ("convgate_slurm_script_" + std::to_string(::getpid()) + ".sh");
  std::ofstream(path) << SbatchScript(Options());
  const std::string command = "bash -n '" + path.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  fs::remove(path);
}

TEST(SlurmTest, SbatchArgsThatBreakTheContractAreRefused) {
  EXPECT_TRUE(CheckSbatchArgs({"--partition=debug", "--cpus-per-task=2", "-pdebug", "--export=ALL",
                               "--time=10:00", "-A", "--account=x"})
                  .ok());
  for (const std::string arg :
       {"--array=0-3", "-a0-3", "--output=x.log", "-ox.log", "--error=e.log", "-e", "--parsable",
        "--wait", "-W", "--wrap=true", "debug", ""}) {
    const Status status = CheckSbatchArgs({arg});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << arg;
    EXPECT_THAT(status.message(), HasSubstr("'" + arg + "'")) << arg;
  }
}

TEST(SlurmTest, ParsesSqueueLines) {
  const std::vector<SlurmTaskState> pending = ParseSqueue("0-3|PENDING\n");
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].task, -1);
  EXPECT_EQ(pending[0].tasks, "0-3");
  EXPECT_FALSE(SlurmStateIsFinal(pending[0].state));
  const std::vector<SlurmTaskState> tasks =
      ParseSqueue("3|COMPLETED\n1|RUNNING\n\ngarbage\n2|FAILED\n");
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].task, 3);
  EXPECT_TRUE(SlurmStateIsFinal(tasks[0].state));
  EXPECT_FALSE(SlurmStateIsFinal(tasks[1].state));
  EXPECT_EQ(tasks[2].state, "FAILED");
  EXPECT_TRUE(SlurmStateIsFinal("CANCELLED by 0"));
  EXPECT_TRUE(SlurmStateIsFinal("OUT_OF_MEMORY"));
  EXPECT_FALSE(SlurmStateIsFinal("COMPLETING"));
}

TEST(SlurmTest, ParsesScontrolOneLinePerTask) {
  // Slurm 22.05's `scontrol -o show job`, shortened.
  const std::string text =
      "JobId=1 ArrayJobId=1 ArrayTaskId=3 JobName=convgate-batch UserId=root(0) "
      "JobState=COMPLETED Reason=None Dependency=(null) ExitCode=0:0 RunTime=00:00:02\n"
      "JobId=4 ArrayJobId=1 ArrayTaskId=2 JobName=convgate-batch UserId=root(0) "
      "JobState=FAILED Reason=NonZeroExitCode Dependency=(null) DerivedExitCode=0:0 "
      "ExitCode=0:9 RunTime=00:00:03\n";
  const std::vector<SlurmTaskState> tasks = ParseScontrol(text);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].task, 3);
  EXPECT_EQ(tasks[0].state, "COMPLETED");
  EXPECT_EQ(tasks[0].exit_code, "0:0");
  EXPECT_EQ(tasks[1].task, 2);
  EXPECT_EQ(tasks[1].state, "FAILED");
  EXPECT_EQ(tasks[1].exit_code, "0:9");  // not DerivedExitCode's
  EXPECT_EQ(tasks[1].reason, "NonZeroExitCode");
}

class SlurmSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convgate_slurm_summary_" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "slurm");
    // Entries whose files do not exist: their pre-flight (and so their keys) needs no model.
    std::string text = "models:\n";
    for (const std::string id : {"a", "b", "c", "d", "e", "f"}) {
      text += "  - id: " + id + "\n    source: " + id + ".onnx\n";
    }
    Result<Manifest> manifest = ParseManifest(text, dir_ / "m.yaml");
    ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
    manifest_ = *manifest;
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({":memory:"});
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(*opened);
    Result<int64_t> run = store_->BeginRun({"m.yaml", "node1", "test", "0/2", "", "2026-11-26"});
    ASSERT_TRUE(run.ok());
    run_id_ = *run;
    keys_ = ManifestEntryKeys(manifest_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Record(size_t entry_idx, const std::string& verdict, const std::string& category,
              const std::string& finished_at) {
    store::JobRecord job;
    job.entry_id = manifest_.entries[entry_idx].id;
    job.entry_key = keys_[entry_idx];
    job.verdict = ParseVerdict(verdict).value();
    job.error_category = category;
    job.finished_at = finished_at;
    ASSERT_TRUE(store_->RecordJob(run_id_, job).ok());
  }

  fs::path dir_;
  Manifest manifest_;
  std::unique_ptr<store::Store> store_;
  int64_t run_id_ = 0;
  std::vector<std::string> keys_;
};

TEST_F(SlurmSummaryTest, KeysAreStableAndDistinct) {
  ASSERT_EQ(keys_.size(), 6u);
  EXPECT_EQ(ManifestEntryKeys(manifest_), keys_);
  EXPECT_EQ(std::set<std::string>(keys_.begin(), keys_.end()).size(), 6u);
}

TEST_F(SlurmSummaryTest, LatestJobPerKeySinceTheSubmission) {
  Record(0, "fail", "", "2026-11-26T10:00:00Z");  // an earlier run's
  Record(0, "pass", "", "2026-11-26T12:00:00Z");
  Record(1, "pass", "", "2026-11-26T10:00:00Z");  // only before the submission
  Result<std::map<std::string, store::JobRecord>> all = LatestJobsByKey(*store_, keys_, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(keys_[0]).verdict, Verdict::kPass);
  Result<std::map<std::string, store::JobRecord>> since =
      LatestJobsByKey(*store_, keys_, "2026-11-26T11:00:00Z");
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(since->size(), 1u);
  EXPECT_EQ(since->count(keys_[1]), 0u);
}

TEST_F(SlurmSummaryTest, MissingEntriesNameTheirTaskAndMakeExit3) {
  const int tasks = 2;
  // Every entry of task 0 recorded; task 1 died after its first entry.
  bool first_of_task1 = true;
  std::vector<std::string> expected_missing;
  const std::vector<int> shard_of = ShardOfEntries(manifest_.entries, tasks);
  for (size_t entry_idx = 0; entry_idx < manifest_.entries.size(); ++entry_idx) {
    const std::string& id = manifest_.entries[entry_idx].id;
    const int task = shard_of[entry_idx];
    if (task == 1 && !first_of_task1) {
      expected_missing.push_back(id);
      continue;
    }
    if (task == 1) first_of_task1 = false;
    Record(entry_idx, "error", "missing-file", "2026-11-26T12:00:00Z");
  }
  ASSERT_FALSE(expected_missing.empty()) << "the ids must spread over both tasks";
  std::ofstream(SlurmTaskLog(dir_, "77", 1)) << "line 1\nslurmstepd: error: *** KILLED ***\n";
  Result<std::map<std::string, store::JobRecord>> latest = LatestJobsByKey(*store_, keys_, "");
  ASSERT_TRUE(latest.ok());
  const std::vector<SlurmTaskState> states = {
      {.task = 0, .tasks = "0", .state = "FAILED", .exit_code = "3:0", .reason = "NonZeroExitCode"},
      {.task = 1,
       .tasks = "1",
       .state = "FAILED",
       .exit_code = "0:9",
       .reason = "NonZeroExitCode"}};
  const SlurmSummary summary =
      MergeSlurmSummary(manifest_, keys_, *latest, states, dir_, "77", tasks);
  EXPECT_EQ(summary.entries, 6);
  EXPECT_EQ(summary.errors, 6 - static_cast<int>(expected_missing.size()));
  EXPECT_EQ(summary.errors_by_category.at("missing-file"), summary.errors);
  ASSERT_EQ(summary.missing.size(), expected_missing.size());
  for (size_t missing_idx = 0; missing_idx < summary.missing.size(); ++missing_idx) {
    EXPECT_EQ(summary.missing[missing_idx].id, expected_missing[missing_idx]);
    EXPECT_EQ(summary.missing[missing_idx].task, 1);
  }
  // Task 0 ended as a batch with errors ends (exit 3): not a problem. Task 1 is.
  ASSERT_EQ(summary.task_problems.size(), 1u);
  EXPECT_EQ(summary.task_problems[0].task, 1);
  EXPECT_EQ(summary.task_problems[0].exit_code, "0:9");
  EXPECT_THAT(summary.task_problems[0].log_tail, HasSubstr("*** KILLED ***"));
  EXPECT_EQ(summary.exit_code, ExitCode::kCannotRun);

  const std::string text = SlurmSummaryText(summary);
  EXPECT_THAT(text, HasSubstr("task 1 ended FAILED, exit code 0:9 (NonZeroExitCode)"));
  EXPECT_THAT(text, HasSubstr("  | slurmstepd: error: *** KILLED ***"));
  EXPECT_THAT(text, HasSubstr(std::to_string(expected_missing.size()) + " missing"));
  EXPECT_THAT(text, HasSubstr("BATCH ERRORS: entries are missing"));
  const nlohmann::json json = SlurmSummaryJson(summary);
  EXPECT_EQ(json["missing"].size(), expected_missing.size());
  EXPECT_EQ(json["exit_code"], 3);
}

TEST_F(SlurmSummaryTest, AGateFailureDecidesTheExitCodeAsLocally) {
  for (size_t entry_idx = 0; entry_idx < manifest_.entries.size(); ++entry_idx) {
    Record(entry_idx, entry_idx == 2 ? "fail" : "pass", "", "2026-11-26T12:00:00Z");
  }
  Result<std::map<std::string, store::JobRecord>> latest = LatestJobsByKey(*store_, keys_, "");
  ASSERT_TRUE(latest.ok());
  // Slurm shows a task whose batch exited 1 as FAILED 1:0: how a batch ends, not a problem.
  const SlurmSummary summary = MergeSlurmSummary(
      manifest_, keys_, *latest,
      {{.task = 0, .tasks = "0", .state = "FAILED", .exit_code = "1:0", .reason = ""},
       {.task = 1, .tasks = "1", .state = "COMPLETED", .exit_code = "0:0", .reason = ""}},
      dir_, "78", 2);
  EXPECT_EQ(summary.passed, 5);
  EXPECT_EQ(summary.failed, 1);
  EXPECT_TRUE(summary.missing.empty());
  EXPECT_TRUE(summary.task_problems.empty());
  EXPECT_EQ(summary.exit_code, ExitCode::kFailed);
  EXPECT_THAT(SlurmSummaryText(summary), HasSubstr("BATCH FAILED"));
}

}  // namespace
}  // namespace convgate::batch
