// What a failed job becomes: oom under --job-memory, transient or not (retried or not), and a
// single gate's job row read from its documents.
#include "convgate/batch/job_policy.h"

#include <gtest/gtest.h>
#include <signal.h>

#include "convgate/batch/batch.h"
#include "convgate/batch/record_gate.h"
#include "convgate/report/report.h"

namespace convgate::batch {
namespace {

store::JobRecord Error(const std::string& category, int exit_code, int signal,
                       const std::string& text) {
  store::JobRecord job;
  job.verdict = Verdict::kError;
  job.error_category = category;
  job.exit_code = exit_code;
  job.signal = signal;
  job.error_text = text;
  return job;
}

TEST(JobPolicyTest, ConcurrentJobsShareTheCores) {
  EXPECT_EQ(JobThreads(1, 2, 2), 0);  // one job on the whole machine: the runtime's own choice
  EXPECT_EQ(JobThreads(2, 2, 2), 1);
  EXPECT_EQ(JobThreads(2, 8, 8), 4);
  EXPECT_EQ(JobThreads(3, 8, 8), 2);
  EXPECT_EQ(JobThreads(16, 8, 8), 1);  // never zero threads once jobs run side by side
  // A process given part of the machine (a Slurm task with --cpus-per-task, taskset) shares out
  // what it was given, one job included.
  EXPECT_EQ(JobThreads(1, 1, 64), 1);
  EXPECT_EQ(JobThreads(1, 4, 64), 4);
  EXPECT_EQ(JobThreads(2, 4, 64), 2);
}

TEST(JobPolicyTest, MemoryErrorsUnderALimitAreOom) {
  for (store::JobRecord job :
       {Error("internal", 4, 0, "std::bad_alloc"),
        Error("load-failed", 3, 0, "onnxruntime: Failed to allocate memory for requested buffer"),
        Error("crash", -1, SIGSEGV, "was killed by signal 11"),
        Error("killed", -1, SIGKILL, "was killed by signal 9"),
        Error("crash", -1, SIGABRT, "terminate called after throwing")}) {
    ClassifyOutOfMemory(int64_t{512} << 20, job);
    EXPECT_EQ(job.error_category, "oom") << job.error_text;
    EXPECT_NE(job.error_text.find("--job-memory 512.0 MiB"), std::string::npos) << job.error_text;
    EXPECT_NE(job.error_text.find("hint:"), std::string::npos);
  }
}

TEST(JobPolicyTest, OtherJobsKeepTheirCategory) {
  store::JobRecord no_limit = Error("internal", 4, 0, "std::bad_alloc");
  ClassifyOutOfMemory(0, no_limit);
  EXPECT_EQ(no_limit.error_category, "internal");
  store::JobRecord timeout = Error("timeout", -1, SIGKILL, "timed out after 3 s");
  ClassifyOutOfMemory(int64_t{1} << 30, timeout);
  EXPECT_EQ(timeout.error_category, "timeout");
  store::JobRecord load = Error("load-failed", 3, 0, "model.onnx: not an ONNX model");
  ClassifyOutOfMemory(int64_t{1} << 30, load);
  EXPECT_EQ(load.error_category, "load-failed");
  store::JobRecord failed;
  failed.verdict = Verdict::kFail;
  failed.exit_code = 1;
  failed.error_text = "out of memory";  // a gate failure's text mentioning memory: still a fail
  ClassifyOutOfMemory(int64_t{1} << 30, failed);
  EXPECT_EQ(failed.error_category, "");
}

TEST(JobPolicyTest, TransientFailuresFollowTheConversionRetryRule) {
  EXPECT_TRUE(IsTransientJobFailure(Error("killed", -1, SIGKILL, "was killed by signal 9")));
  EXPECT_TRUE(IsTransientJobFailure(Error("unexpected-exit", 75, 0, "")));
  EXPECT_TRUE(IsTransientJobFailure(
      Error("convert-failed", 3, 0, "converter: license server temporarily unavailable")));
  EXPECT_TRUE(IsTransientJobFailure(Error("load-failed", 3, 0, "Connection reset by peer")));
  EXPECT_FALSE(IsTransientJobFailure(Error("timeout", -1, SIGKILL, "timed out after 600 s")));
  EXPECT_FALSE(IsTransientJobFailure(Error("crash", -1, SIGSEGV, "killed by signal 11")));
  EXPECT_FALSE(IsTransientJobFailure(Error("oom", -1, SIGKILL, "out of memory")));
  EXPECT_FALSE(IsTransientJobFailure(Error("oom", 3, 0, "Resource temporarily unavailable")));
  EXPECT_FALSE(IsTransientJobFailure(Error("missing-file", -1, 0, "no such file")));
  EXPECT_FALSE(IsTransientJobFailure(Error("corrupt-file", -1, 0, "not an ONNX model")));
  EXPECT_FALSE(IsTransientJobFailure(Error("convert-failed", 3, 0, "unsupported operator")));
  EXPECT_FALSE(IsTransientJobFailure(Error("usage", 2, 0, "try again with --to")));
  store::JobRecord failed;
  failed.verdict = Verdict::kFail;
  failed.exit_code = 1;
  failed.error_text = "connection";
  EXPECT_FALSE(IsTransientJobFailure(failed));
  EXPECT_DOUBLE_EQ(JobRetryBackoffSeconds(2), 1.0);
  EXPECT_DOUBLE_EQ(JobRetryBackoffSeconds(4), 4.0);
  EXPECT_DOUBLE_EQ(JobRetryBackoffSeconds(20), 30.0);
}

TEST(RecordGateTest, GateJobReadsVerdictFiguresAndErrorStage) {
  GateRecord gate;
  gate.command = "compare";
  gate.model = "/nonexistent/dir/My Model.onnx";
  gate.conversion = "target:b.onnx";
  gate.argv = {"convgate", "compare", "a.onnx", "b.onnx"};
  gate.exit_code = 1;
  // A real report.json, as compare writes it: read back through report's reader.
  gate::CompareReport compared;
  gate::OutputCheck check;
  check.output = "logits";
  compare::TensorComparison comparison;
  comparison.num_elements = 10;
  comparison.errors.compared = 10;
  comparison.errors.max_abs_error = 0.5;
  comparison.errors.mean_abs_error = 0.1;
  comparison.mismatches = 3;
  comparison.metrics.cosine = 0.9;
  check.comparison = comparison;
  compared.checks.push_back(check);
  compared.verdict = Verdict::kFail;
  const report::Invocation invocation{"compare", gate.argv, "2026-11-29T00:00:00Z", 0.5};
  const nlohmann::json report = report::ReportJson(compared, invocation);
  store::JobRecord job = GateJob(gate, report, nlohmann::json::object());
  EXPECT_EQ(job.entry_id, "My_Model");
  EXPECT_EQ(job.verdict, Verdict::kFail);
  EXPECT_EQ(job.model_sha256, "");  // no such file
  EXPECT_EQ(job.entry_key.rfind("gate:", 0), 0u);
  ASSERT_EQ(job.outputs.size(), 1u);
  EXPECT_EQ(job.outputs[0].max_abs_error, 0.5);
  EXPECT_EQ(job.outputs[0].mismatches, 3);
  EXPECT_EQ(job.outputs[0].cosine, 0.9);
  EXPECT_EQ(job.outputs[0].verdict, Verdict::kFail);

  gate.exit_code = 3;
  gate.entry_id = "given";
  gate::CompareReport errored;
  errored.error = gate::GateError{gate::Stage::kLoad, Status::DataLoss("b.onnx: truncated")};
  job = GateJob(gate, report::ReportJson(errored, invocation), nlohmann::json());
  EXPECT_EQ(job.entry_id, "given");
  EXPECT_EQ(job.verdict, Verdict::kError);
  EXPECT_EQ(job.error_category, "load-failed");
  EXPECT_EQ(job.error_text, "b.onnx: truncated");
}

// One mapping of convgate's exit codes to a job's error category, for a child that exited and
// for a gate recorded in-process alike.
TEST(JobPolicyTest, ExitCodesHaveOneErrorCategory) {
  EXPECT_EQ(ErrorCategoryOfExit(2), "usage");
  EXPECT_EQ(ErrorCategoryOfExit(3), "cannot-run");
  EXPECT_EQ(ErrorCategoryOfExit(4), "internal");
  EXPECT_EQ(ErrorCategoryOfExit(130), "interrupted");
  EXPECT_EQ(ErrorCategoryOfExit(143), "interrupted");
  EXPECT_EQ(ErrorCategoryOfExit(75), "unexpected-exit");
}

}  // namespace
}  // namespace convgate::batch
