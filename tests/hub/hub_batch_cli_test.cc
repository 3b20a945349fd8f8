// Models by id in batch manifests and in the results: `convgate batch` fetching hf:// models (and
// the reference's model_id + file_path) in its preflight from tests/fixtures/fake_hub.py, resume
// keys that do not depend on where the cache is, offline runs from the cache, and where each model
// came from in summary.json, the store, `history --json`, report.json, verify_result.json and the
// console.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/cli_fixture.h"
#include "testing/fake_hub.h"

namespace convgate::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kTinyCnn = fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx";

class HubBatchCliTest : public HubCliTest {
 protected:
  void SetUp() override {
    HubCliTest::SetUp();
    const fs::path tiny = dir_ / "repos/org/tiny";
    fs::create_directories(tiny);
    fs::copy_file(kTinyCnn, tiny / "model.onnx");
    std::ofstream(tiny / "config.json") << R"({"model_type": "bert"})";
    StartHub();
  }

  // convgate pointed at the fake hub with the cache `cache`; `env` adds NAME=VALUE entries.
  ProcessResult Run(const std::vector<std::string>& args, const std::string& cache = "cache",
                    const std::vector<std::string>& env = {}) {
    return RunWithHub(args, cache, env);
  }

  static const json& Job(const json& summary, const std::string& id) {
    for (const json& job : summary["jobs"]) {
      if (job["id"] == id) return job;
    }
    static const json kNone;
    ADD_FAILURE() << "no job " << id << " in " << summary.dump();
    return kNone;
  }
  std::string Commit(const std::string& cache = "cache") const {
    return ReadWholeFile(dir_ / cache / "models--org--tiny/refs/main");
  }

  void WriteManifest() {
    std::ofstream(dir_ / "m.yaml") << "models:\n"
                                      "  - id: by-uri\n"
                                      "    source: hf://org/tiny/model.onnx\n"
                                      "  - id: by-id\n"
                                      "    model_id: org/tiny\n"
                                      "    file_path: model.onnx\n"
                                      "    revision: main\n"
                                      "    target: hf://org/tiny/model.onnx\n"
                                      "  - id: absent\n"
                                      "    model_id: org/tiny\n"
                                      "    file_path: nope.onnx\n";
  }
};

TEST_F(HubBatchCliTest, PreflightFetchesModelsByIdAndRecordsWhereTheyCameFrom) {
  WriteManifest();
  ProcessResult batch = Run({"batch", Path("m.yaml"), "--out", Path("out"), "-j", "1"});
  ASSERT_EQ(batch.exit_code, 3) << Describe(batch);  // `absent` is missing
  const std::string commit = Commit();
  ASSERT_EQ(commit.size(), 40u);
  const json summary = ReadJson("out/summary.json");
  const json& by_uri = Job(summary, "by-uri");
  EXPECT_EQ(by_uri["verdict"], "pass") << by_uri.dump();
  EXPECT_EQ(by_uri["model_type"], "bert");  // config.json of the repository
  EXPECT_EQ(by_uri["model_type_source"], "config.json");
  ASSERT_TRUE(by_uri["model_origins"].is_array()) << by_uri.dump();
  const json& origin = by_uri["model_origins"][0];
  EXPECT_EQ(origin["uri"], "hf://org/tiny/model.onnx");
  EXPECT_EQ(origin["repo_id"], "org/tiny");
  EXPECT_EQ(origin["revision"], "main");
  EXPECT_EQ(origin["commit"], commit);
  EXPECT_EQ(origin["file"], "model.onnx");
  EXPECT_EQ(origin["etag"].get<std::string>().size(), 64u);  // an LFS file: its sha256
  EXPECT_EQ(origin["size"], fs::file_size(kTinyCnn));
  EXPECT_EQ(origin["how"], "downloaded");  // the first entry fetched it
  const json& by_id = Job(summary, "by-id");
  EXPECT_EQ(by_id["verdict"], "pass") << by_id.dump();
  ASSERT_EQ(by_id["model_origins"].size(), 2u) << by_id.dump();  // source and target
  EXPECT_EQ(by_id["model_origins"][0]["uri"], "hf://org/tiny@main/model.onnx");
  EXPECT_EQ(by_id["model_origins"][0]["how"], "cache");
  const json& absent = Job(summary, "absent");
  EXPECT_EQ(absent["error_category"], "missing-file");
  EXPECT_NE(absent["error"].get<std::string>().find(
                "hf://org/tiny@main/nope.onnx: 'nope.onnx' of org/tiny at main: not found"),
            std::string::npos)
      << absent.dump();

  // The job ran on the commit the preflight resolved (no second download, no moving branch).
  const json report = ReadJson("out/by-uri/report.json");
  ASSERT_TRUE(report["model_origins"].is_array()) << report.dump();
  EXPECT_EQ(report["model_origins"][0]["uri"], "hf://org/tiny@" + commit + "/model.onnx");

  // The store: history --json shows the same origins.
  ProcessResult history = Run({"history", "--store", Path("out/convgate.db"), "by-uri", "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json rows = json::parse(history.out);
  ASSERT_EQ(rows.size(), 1u) << history.out;
  EXPECT_EQ(rows[0]["model_origins"], by_uri["model_origins"]);
}

TEST_F(HubBatchCliTest, ResumeKeysDoNotDependOnTheCacheAndOfflineRunsFromIt) {
  WriteManifest();
  ASSERT_EQ(Run({"batch", Path("m.yaml"), "--out", Path("out")}).exit_code, 3);
  // Another cache (another machine): the same ids, revisions and bytes are the same keys.
  ProcessResult resumed =
      Run({"batch", Path("m.yaml"), "--out", Path("out"), "--resume"}, "other-cache");
  ASSERT_EQ(resumed.exit_code, 3) << Describe(resumed);
  // The two verdicts are found under their keys; the missing file's error is not a verdict, so
  // it runs again (--skip-errors would skip it too).
  EXPECT_NE(resumed.out.find("1 error (missing-file 1), 2 skipped as done"), std::string::npos)
      << resumed.out;

  // Offline from the first cache: no request; the missing file says why.
  const size_t requests = RequestCount();
  ProcessResult offline =
      Run({"batch", Path("m.yaml"), "--out", Path("offline")}, "cache", {"HF_HUB_OFFLINE=1"});
  ASSERT_EQ(offline.exit_code, 3) << Describe(offline);
  EXPECT_EQ(RequestCount(), requests);
  const json summary = ReadJson("offline/summary.json");
  EXPECT_EQ(Job(summary, "by-uri")["verdict"], "pass");
  EXPECT_EQ(Job(summary, "by-id")["verdict"], "pass");
  EXPECT_NE(Job(summary, "absent")["error"].get<std::string>().find("HF_HUB_OFFLINE is set"),
            std::string::npos);
}

TEST_F(HubBatchCliTest, ReferenceJsonManifestNamesHubFiles) {
  std::ofstream(dir_ / "models.json")
      << R"([{"model_id": "org/tiny", "file_path": "model.onnx", "model_type": "bert"}])";
  ProcessResult batch = Run({"batch", Path("models.json"), "--out", Path("out")});
  ASSERT_EQ(batch.exit_code, 0) << Describe(batch);
  const json summary = ReadJson("out/summary.json");
  const json& job = Job(summary, "org_tiny");
  EXPECT_EQ(job["model_origins"][0]["repo_id"], "org/tiny");
}

TEST_F(HubBatchCliTest, SingleGatesRecordWhereTheirModelsCameFrom) {
  ProcessResult run =
      Run({"run", "hf://org/tiny/model.onnx", "--out", Path("run"), "--store", Path("gates.db")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  const std::string commit = Commit();
  EXPECT_NE(run.out.find("model origin: hf://org/tiny/model.onnx: org/tiny at main = commit " +
                         commit + ", downloaded now"),
            std::string::npos)
      << run.out;
  const json report = ReadJson("run/report.json");
  EXPECT_EQ(report["model_origins"][0]["commit"], commit);
  EXPECT_EQ(report["model_origins"][0]["how"], "downloaded");
  const json verify_result = ReadJson("run/verify_result.json");
  EXPECT_EQ(verify_result["model_origins"][0]["file"], "model.onnx");
  ProcessResult history = Run({"history", "--store", Path("gates.db"), "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  EXPECT_EQ(json::parse(history.out)[0]["model_origins"], report["model_origins"]);

  ProcessResult verify = Run({"verify", "hf://org/tiny/model.onnx", "--target",
                              "hf://org/tiny/model.onnx", "--out", Path("verify")});
  ASSERT_EQ(verify.exit_code, 0) << Describe(verify);
  const json verified = ReadJson("verify/report.json");
  ASSERT_EQ(verified["model_origins"].size(), 2u) << verified.dump();
  EXPECT_EQ(verified["model_origins"][1]["how"], "cache");
  // `convgate check` reads a compare report holding origins back, and its re-judged report keeps
  // them: the models it judges are the saved report's.
  ProcessResult compare =
      Run({"compare", "hf://org/tiny/model.onnx", kTinyCnn.string(), "--out", Path("compare")});
  ASSERT_EQ(compare.exit_code, 0) << Describe(compare);
  ProcessResult check = Run({"check", Path("compare/report.json"), "--out", Path("check")});
  ASSERT_EQ(check.exit_code, 0) << Describe(check);
  EXPECT_EQ(ReadJson("compare/report.json")["model_origins"][0]["how"], "cache");
  EXPECT_EQ(ReadJson("check/report.json")["command"], "check");
  EXPECT_EQ(ReadJson("check/report.json")["model_origins"],
            ReadJson("compare/report.json")["model_origins"]);

  ProcessResult inspect = Run({"inspect", "hf://org/tiny/model.onnx", "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_EQ(json::parse(inspect.out)["model_origins"][0]["commit"], commit);
}

}  // namespace
// `convgate bench` names models as the model file verification pipeline does: an id with
// --file-path, a list of ids, a list file; each fetched and verified before it is timed, its
// origin recorded beside the figures.
TEST_F(HubBatchCliTest, BenchNamesHubModelsByIdListAndFile) {
  const std::vector<std::string> quick = {"--warmup", "1", "--iterations", "5"};
  std::vector<std::string> args = {"bench", "hf://org/tiny", "--file", "model.onnx",
                                   "--out", Path("one"),     "--dim",  "batch=1"};
  args.insert(args.end(), quick.begin(), quick.end());
  ProcessResult one = Run(args);
  ASSERT_EQ(one.exit_code, 0) << Describe(one);
  const json report = ReadJson("one/report.json");
  ASSERT_TRUE(report["model_origins"].is_array()) << report.dump().substr(0, 300);
  EXPECT_EQ(report["model_origins"][0]["repo_id"], "org/tiny");
  EXPECT_EQ(report["benchmark"]["sides"][0]["latency"]["count"], 5);

  std::ofstream(dir_ / "models.txt") << "# the fleet\norg/tiny\n\nhf://org/tiny/model.onnx\n";
  args = {"bench",      "--model-file", Path("models.txt"), "--file-path", "model.onnx", "--out",
          Path("list"), "--store",      Path("list.db"),    "--dim",       "batch=1"};
  args.insert(args.end(), quick.begin(), quick.end());
  ProcessResult list = Run(args);
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  EXPECT_NE(list.out.find("org/tiny "), std::string::npos) << list.out;
  EXPECT_TRUE(fs::exists(dir_ / "list/org_tiny/report.json"));
  EXPECT_TRUE(fs::exists(dir_ / "list/org_tiny_model.onnx/report.json"));
  // Both lines name the same file: one series, measured twice.
  ProcessResult trend = Run({"history", "--store", Path("list.db"), "--trend", "p50_ms", "--json"});
  ASSERT_EQ(trend.exit_code, 0) << Describe(trend);
  const json rows = json::parse(trend.out)["trend"];
  ASSERT_EQ(rows.size(), 2u) << trend.out;
  for (const json& row : rows) EXPECT_GT(row["value"].get<double>(), 0) << row.dump();
  ProcessResult history = Run({"history", "--store", Path("list.db"), "--json"});
  ASSERT_EQ(history.exit_code, 0) << Describe(history);
  const json latest = json::parse(history.out);
  ASSERT_EQ(latest.size(), 1u) << history.out;
  EXPECT_EQ(latest[0]["command"], "bench");
  EXPECT_GT(latest[0]["p50_ms"].get<double>(), 0) << latest[0].dump();
  EXPECT_TRUE(latest[0]["model_origins"].is_array()) << latest[0].dump();

  // A file the repository does not have is named, exit 3; the list goes on.
  args = {"bench",       "--models",   "org/tiny", "org/absent-model",
          "--file-path", "model.onnx", "--dim",    "batch=1"};
  args.insert(args.end(), quick.begin(), quick.end());
  ProcessResult absent = Run(args);
  EXPECT_EQ(absent.exit_code, 3) << Describe(absent);
  EXPECT_NE(absent.err.find("org/absent-model"), std::string::npos) << absent.err;
  EXPECT_NE(absent.out.find("ERROR"), std::string::npos) << absent.out;
}

}  // namespace convgate::testing
