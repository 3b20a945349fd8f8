// `convgate batch` under faults, on the real binary: a converter that segfaults, one that hangs,
// an exec runtime that aborts, a job over its --job-memory limit, transient failures retried (and
// deterministic ones not), the cache cleanup after the batch, and the progress line on a terminal.
#include <gtest/gtest.h>
#include <signal.h>

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
const fs::path kFixtures = fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures";

class BatchFaultsTest : public testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::unsetenv("CACHE_CLEANUP_THRESHOLD");
    ::unsetenv("CACHE_CLEANUP_MIN_AGE_DAYS");
    ::unsetenv("CONVGATE_CACHE_MAX_BYTES");
    ::unsetenv("CONVGATE_CACHE_MIN_AGE_SECONDS");
  }
  void TearDown() override {
    ::unsetenv("CACHE_CLEANUP_THRESHOLD");
    ::unsetenv("CACHE_CLEANUP_MIN_AGE_DAYS");
    CliTest::TearDown();
  }

  std::string Model(const std::string& name) const { return (kExamples / name).string(); }
  std::string Fixture(const std::string& name) const { return (kFixtures / name).string(); }

  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  std::string Good(const std::string& id) const {
    return "  - id: " + id + "\n    source: " + Model("tinycnn.onnx") +
           "\n    target: " + Model("tinycnn_converted.onnx") + "\n";
  }
  // tinycnn converted by an external converter command (a YAML-quoted string).
  std::string Converted(const std::string& id, const std::string& converter,
                        const std::string& extra = "") const {
    return "  - id: " + id + "\n    source: " + Model("tinycnn.onnx") + "\n    converter: '" +
           converter + "'\n" + extra;
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

  std::map<std::string, store::HistoryRow> StoreJobs(const std::string& db) {
    std::map<std::string, store::HistoryRow> by_id;
    Result<std::unique_ptr<store::Store>> opened = store::Store::Open({db});
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return by_id;
    Result<std::vector<store::HistoryRow>> rows = (*opened)->Jobs({});
    EXPECT_TRUE(rows.ok());
    if (!rows.ok()) return by_id;
    for (const store::HistoryRow& row : *rows) {
      EXPECT_EQ(by_id.count(row.job.entry_id), 0u) << row.job.entry_id << " recorded twice";
      by_id[row.job.entry_id] = row;
    }
    return by_id;
  }
};

TEST_F(BatchFaultsTest, CrashingHangingAndAbortingJobsAreTheirOwnErrors) {
  const std::string python = "/usr/bin/python3 ";
  Write("m.yaml",
        "models:\n" + Good("good-1") +
            Converted("segv-converter", python + Fixture("crash.py") + " segv {src} {out}") +
            Converted("hung-converter",
                      python + Fixture("hang.py") + " " + Path("hang.pid") + " {src} {out}",
                      "    timeout: 3s\n") +
            // An aborting exec runtime on the target side of a compare.
            "  - id: aborting-runtime\n    command: compare\n    source: " + Model("tinycnn.onnx") +
            "\n    target: " + Model("tinycnn_converted.onnx") + "\n    flags: [--target-exec, \"" +
            python + Fixture("crash.py") + " abort {model} {inputs} {outputs}\"]\n" +
            Good("good-2"));
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "-j", "2"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);  // errors, no gate failed
  auto jobs = StoreJobs(Path("out/convgate.db"));
  ASSERT_EQ(jobs.size(), 5u);
  EXPECT_EQ(jobs["good-1"].job.verdict, Verdict::kPass);
  EXPECT_EQ(jobs["good-2"].job.verdict, Verdict::kPass);

  // The converter's SIGSEGV is the conversion's failure, named with the signal and its stderr.
  const store::JobRecord& segv = jobs["segv-converter"].job;
  EXPECT_EQ(segv.verdict, Verdict::kError);
  EXPECT_EQ(segv.error_category, "convert-failed") << segv.error_text;
  EXPECT_NE(segv.error_text.find("signal 11"), std::string::npos) << segv.error_text;
  EXPECT_NE(segv.error_text.find("about to segv"), std::string::npos) << segv.error_text;
  EXPECT_GT(segv.duration_seconds, 0.0);

  // The hung converter is cut by the job's timeout: the job's signal is the batch's kill.
  const store::JobRecord& hung = jobs["hung-converter"].job;
  EXPECT_EQ(hung.error_category, "timeout") << hung.error_text;
  EXPECT_NE(hung.error_text.find("timed out"), std::string::npos) << hung.error_text;
  EXPECT_GE(hung.duration_seconds, 3.0);
  const pid_t converter = testing::ReadPidFile(Path("hang.pid"));
  ASSERT_GT(converter, 0);
  EXPECT_TRUE(testing::WaitFor([&] { return !testing::ProcessIsRunning(converter); }, 60.0))
      << "waited 60 s for the converter (pid " << converter << ") to end with its job";

  // The runtime's abort (SIGABRT in the exec runner) is that job's run failure.
  const store::JobRecord& aborted = jobs["aborting-runtime"].job;
  EXPECT_EQ(aborted.error_category, "run-failed") << aborted.error_text;
  EXPECT_NE(aborted.error_text.find("signal 6"), std::string::npos) << aborted.error_text;
  EXPECT_NE(aborted.error_text.find("about to abort"), std::string::npos) << aborted.error_text;

  const json summary = ReadJson(dir_ / "out/summary.json");
  EXPECT_EQ(summary["passed"], 2);
  EXPECT_EQ(summary["errors"], 3);
  // Crashes are not transient: nothing was retried.
  EXPECT_EQ(summary["retried"], 0);
  for (const json& job : summary["jobs"]) EXPECT_EQ(job["attempts"], 1) << job["id"];
}

TEST_F(BatchFaultsTest, JobOverItsMemoryLimitIsOom) {
  Write("m.yaml", "models:\n" + Good("cnn"));
  // Enough for convgate to start, too little for ONNX Runtime to create a session (the job
  // passes from about 85 MiB of address space up, and cannot start below about 45).
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "--job-memory", "64M", "--quiet"});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  auto jobs = StoreJobs(Path("out/convgate.db"));
  const store::JobRecord& job = jobs["cnn"].job;
  EXPECT_EQ(job.error_category, "oom") << job.error_text;
  EXPECT_NE(job.error_text.find("--job-memory"), std::string::npos) << job.error_text;
  EXPECT_NE(job.error_text.find("hint: raise --job-memory"), std::string::npos) << job.error_text;
  // The job's own words say what ran out, not that convgate has a bug.
  EXPECT_EQ(job.error_text.find("internal error"), std::string::npos) << job.error_text;
  EXPECT_NE(job.error_text.find("convgate: out of memory"), std::string::npos) << job.error_text;
  EXPECT_NE(r.out.find("oom 1"), std::string::npos) << r.out;
  // The same entry passes with room, so the limit and nothing else failed it.
  ProcessResult roomy = Batch({Path("m.yaml"), "--out", Path("out2"), "--job-memory", "64G"});
  EXPECT_EQ(roomy.exit_code, 0) << Describe(roomy);
  ProcessResult tiny = Batch({Path("m.yaml"), "--out", Path("out3"), "--job-memory", "1M"});
  EXPECT_EQ(tiny.exit_code, 2) << Describe(tiny);
  EXPECT_NE(tiny.err.find("below 16 MiB"), std::string::npos) << tiny.err;
}

TEST_F(BatchFaultsTest, TransientFailureIsRetriedDeterministicOnesAreNot) {
  // The converter fails its first run with EX_TEMPFAIL; the job's own conversion retries are off
  // (--retries 0), so the job fails transiently and the batch's retry passes.
  const std::string transient = "/usr/bin/python3 " + Fixture("fake_converter.py") +
                                " transient {src} {out} --failures 1 --counter " + Path("counter");
  Write("m.yaml", "models:\n" + Converted("flaky", transient, "    flags: [--retries, '0']\n") +
                      "  - id: perturbed\n    source: " + Model("tinycnn.onnx") +
                      "\n    target: " + Model("tinycnn_perturbed.onnx") + "\n" +
                      Converted("broken", "/usr/bin/python3 " + Fixture("fake_converter.py") +
                                              " fail {src} {out}"));
  ProcessResult r = Batch({Path("m.yaml"), "--out", Path("out"), "-j", "1"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  auto jobs = StoreJobs(Path("out/convgate.db"));
  EXPECT_EQ(jobs["flaky"].job.verdict, Verdict::kPass) << jobs["flaky"].job.error_text;
  EXPECT_NE(jobs["flaky"].job.error_text.find("attempt 2 of 2"), std::string::npos)
      << jobs["flaky"].job.error_text;
  EXPECT_NE(jobs["flaky"].job.error_text.find("temporarily unavailable"), std::string::npos)
      << jobs["flaky"].job.error_text;
  std::ifstream counter(Path("counter"));
  int runs = 0;
  counter >> runs;
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(jobs["perturbed"].job.verdict, Verdict::kFail);
  EXPECT_EQ(jobs["broken"].job.error_category, "convert-failed");
  const json summary = ReadJson(dir_ / "out/summary.json");
  EXPECT_EQ(summary["retried"], 1);
  std::map<std::string, int> attempts;
  for (const json& job : summary["jobs"]) attempts[job["id"]] = job["attempts"];
  EXPECT_EQ(attempts["flaky"], 2);
  EXPECT_EQ(attempts["perturbed"], 1);
  EXPECT_EQ(attempts["broken"], 1);
  EXPECT_NE(r.out.find("1 retried after a transient failure"), std::string::npos) << r.out;

  // --retries 0: the same transient failure stays the job's error.
  fs::remove(Path("counter"));
  ProcessResult once = Batch({Path("m.yaml"), "--out", Path("out0"), "--retries", "0"});
  EXPECT_EQ(once.exit_code, 1) << Describe(once);
  EXPECT_EQ(StoreJobs(Path("out0/convgate.db"))["flaky"].job.error_category, "convert-failed");
}

TEST_F(BatchFaultsTest, CacheIsCleanedAfterTheBatchAndTheSummarySaysWhat) {
  Write("m.yaml", "models:\n  - id: half\n    source: " + Model("tinycnn.onnx") +
                      "\n    to: fp16\n    policy: {atol: 0.01, rtol: 0.01}\n");
  // Nothing over the default limit: nothing removed, and the summary says so.
  ProcessResult kept = Batch({Path("m.yaml"), "--out", Path("out1")});
  ASSERT_EQ(kept.exit_code, 0) << Describe(kept);
  EXPECT_NE(kept.out.find("cache cleanup: nothing removed"), std::string::npos) << kept.out;
  json summary = ReadJson(dir_ / "out1/summary.json");
  EXPECT_EQ(summary["cache_cleanup"]["entries_removed"], 0);
  EXPECT_EQ(summary["cache_cleanup"]["entries_before"], 1);

  // The reference's variables: a 0 GB threshold and no minimum age remove the conversion.
  ::setenv("CACHE_CLEANUP_THRESHOLD", "0", 1);
  ::setenv("CACHE_CLEANUP_MIN_AGE_DAYS", "0", 1);
  ProcessResult pruned = Batch({Path("m.yaml"), "--out", Path("out2")});
  ASSERT_EQ(pruned.exit_code, 0) << Describe(pruned);
  EXPECT_NE(pruned.out.find("cache cleanup: removed 1 of 1 entries"), std::string::npos)
      << pruned.out;
  summary = ReadJson(dir_ / "out2/summary.json");
  EXPECT_EQ(summary["cache_cleanup"]["entries_removed"], 1);
  EXPECT_GT(summary["cache_cleanup"]["bytes_removed"].get<int64_t>(), 0);

  // A malformed threshold is a usage error before any job runs.
  ::setenv("CACHE_CLEANUP_THRESHOLD", "lots", 1);
  ProcessResult bad = Batch({Path("m.yaml"), "--out", Path("out3")});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("CACHE_CLEANUP_THRESHOLD"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir_ / "out3/convgate.db"));
  // --no-cache-cleanup skips it (and the variables).
  ProcessResult skipped = Batch({Path("m.yaml"), "--out", Path("out4"), "--no-cache-cleanup"});
  EXPECT_EQ(skipped.exit_code, 0) << Describe(skipped);
  EXPECT_EQ(skipped.out.find("cache cleanup"), std::string::npos) << skipped.out;
}

TEST_F(BatchFaultsTest, ProgressIsOneUpdatingLineOnATerminalAndPlainLinesOtherwise) {
  Write("m.yaml", "models:\n" + Good("a") + Good("b") + Good("c"));
  // script(1) gives the batch a pseudo-terminal as stderr.
  const std::string command =
      Binary().string() + " batch " + Path("m.yaml") + " --out " + Path("tty") + " -j 1 2>&1";
  ProcessResult tty = testing::RunProcess({"/usr/bin/script", "-qec", command, "/dev/null"});
  ASSERT_EQ(tty.exit_code, 0) << Describe(tty);
  EXPECT_NE(tty.out.find("\r\x1b[K[0/3] 0 passed, 0 failed, 0 errors | 0:0"), std::string::npos)
      << tty.out;
  EXPECT_NE(tty.out.find(", ETA - | running: a"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("[1/3] 1 passed, 0 failed, 0 errors | 0:0"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(", ETA 0:0"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("\r\x1b[K[3/3] 3 passed, 0 failed, 0 errors"), std::string::npos)
      << tty.out;
  EXPECT_EQ(tty.out.find("[1/3] a pass"), std::string::npos) << tty.out;
  // Not a terminal: one plain line per job, no carriage return.
  ProcessResult plain = Batch({Path("m.yaml"), "--out", Path("plain"), "-j", "1"});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  EXPECT_NE(plain.err.find("[1/3] a pass"), std::string::npos) << plain.err;
  EXPECT_EQ(plain.err.find('\r'), std::string::npos) << plain.err;
  ProcessResult quiet = Batch({Path("m.yaml"), "--out", Path("quiet"), "--quiet"});
  ASSERT_EQ(quiet.exit_code, 0) << Describe(quiet);
  EXPECT_EQ(quiet.err, "");
}

}  // namespace
}  // namespace convgate
