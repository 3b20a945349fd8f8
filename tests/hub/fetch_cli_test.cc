// `convgate fetch` on the real binary against a fake hub (tests/fixtures/fake_hub.py, Python's
// http.server on 127.0.0.1) serving repositories made here, with faults injected per request, and
// against the real huggingface_hub client from the project's venv sharing one cache.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "convgate/core/file_util.h"
#include "testing/cli_fixture.h"
#include "testing/fake_hub.h"

namespace convgate::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kTinyCnn = fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx";
constexpr char kToken[] = "hf_SECRETtoken0123456789";

std::string ReadAll(const fs::path& path) { return ReadWholeFile(path); }

class FetchCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    const fs::path tiny = dir_ / "repos/org/tiny";
    fs::create_directories(tiny / "sub");
    fs::copy_file(kTinyCnn, tiny / "model.onnx");
    std::ofstream(tiny / "config.json")
        << R"({"model_type": "bert", "architectures": ["BertModel"], "pipeline_tag": "fill-mask"})";
    std::ofstream(tiny / "sub/notes.txt") << "notes\n";
    fs::create_directories(dir_ / "repos/org/private");
    fs::copy_file(kTinyCnn, dir_ / "repos/org/private/model.onnx");
    fs::create_directories(dir_ / "hfhome");
  }

  void StartHub(std::vector<std::string> extra = {}) {
    extra.insert(extra.end(), {"--private", "org/private", "--token", kToken});
    hub_ = std::make_unique<FakeHub>(dir_ / "repos", dir_ / "requests.jsonl", extra);
    ASSERT_GT(hub_->port(), 0) << "the fake hub did not start";
  }

  fs::path Cache() const { return dir_ / "cache"; }

  // convgate with the hub's settings; `env` adds NAME=VALUE entries.
  ProcessResult Fetch(std::vector<std::string> args, std::vector<std::string> env = {}) {
    // A stall timeout generous enough that a loaded CI machine sees no stalls.
    env.insert(env.begin(), "CONVGATE_HUB_STALL_TIMEOUT=5");
    std::vector<std::string> argv = HubEnvArgv(*hub_, Cache(), dir_ / "hfhome", env);
    argv.push_back(Binary().string());
    argv.push_back("fetch");
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  std::vector<nlohmann::json> Requests() const {
    std::vector<nlohmann::json> requests;
    std::ifstream in(dir_ / "requests.jsonl");
    for (std::string line; std::getline(in, line);) requests.push_back(nlohmann::json::parse(line));
    return requests;
  }
  size_t CountRequests(const std::string& method, const std::string& path_part) const {
    size_t count = 0;
    for (const nlohmann::json& request : Requests()) {
      if (request["method"] == method &&
          request["path"].get<std::string>().find(path_part) != std::string::npos) {
        ++count;
      }
    }
    return count;
  }

  // Files in the cache whose name ends with `suffix` ("" for all regular files and links).
  std::vector<fs::path> CacheFiles(const std::string& suffix = "") const {
    std::vector<fs::path> found;
    if (!fs::exists(Cache())) return found;
    for (const auto& entry : fs::recursive_directory_iterator(Cache())) {
      if (!entry.is_directory() && entry.path().string().ends_with(suffix)) {
        found.push_back(entry.path());
      }
    }
    return found;
  }
  void ExpectNoPartialFiles() const { EXPECT_TRUE(CacheFiles(".incomplete").empty()); }

  std::string Commit() const { return ReadAll(Cache() / "models--org--tiny/refs/main"); }

  // The hub writes its request log into dir_: stop it before the folder is removed, or a line
  // it writes after the last request races remove_all ("Directory not empty").
  void TearDown() override {
    hub_.reset();
    CliTest::TearDown();
  }

  std::unique_ptr<FakeHub> hub_;
};

TEST_F(FetchCliTest, DownloadsIntoHuggingfaceHubsLayoutAndReusesIt) {
  StartHub();
  ProcessResult first = Fetch({"org/tiny", "model.onnx", "config.json", "sub/notes.txt"});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  const std::string commit = Commit();
  ASSERT_EQ(commit.size(), 40u);
  const fs::path snapshot = Cache() / "models--org--tiny/snapshots" / commit;
  EXPECT_EQ(first.out, (snapshot / "model.onnx").string() + "\n" +
                           (snapshot / "config.json").string() + "\n" +
                           (snapshot / "sub/notes.txt").string() + "\n");
  Result<std::string> sha256 = Sha256File(kTinyCnn);
  ASSERT_TRUE(sha256.ok());
  EXPECT_EQ(fs::read_symlink(snapshot / "model.onnx"), fs::path("../../blobs/" + *sha256));
  EXPECT_EQ(fs::read_symlink(snapshot / "sub/notes.txt").string().substr(0, 15), "../../../blobs/");
  EXPECT_EQ(ReadAll(snapshot / "model.onnx"), ReadAll(kTinyCnn));
  EXPECT_EQ(ReadAll(snapshot / "sub/notes.txt"), "notes\n");
  // The LFS file came from the CDN host (another host name), the others from the hub.
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 1u);
  EXPECT_EQ(CountRequests("GET", "/resolve/"), 2u);
  ExpectNoPartialFiles();

  // Again: the cache answers; one HEAD per file (main may have moved), no download.
  ProcessResult again = Fetch({"org/tiny", "model.onnx", "--json"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const nlohmann::json json = nlohmann::json::parse(again.out);
  EXPECT_EQ(json["files"][0]["downloaded"], false);
  EXPECT_EQ(json["files"][0]["commit"], commit);
  EXPECT_EQ(json["files"][0]["etag"], *sha256);
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 1u);

  // At a commit, nothing is asked at all.
  const size_t before = Requests().size();
  ProcessResult pinned = Fetch({"org/tiny", "model.onnx", "--revision", commit});
  ASSERT_EQ(pinned.exit_code, 0) << Describe(pinned);
  EXPECT_EQ(pinned.out, (snapshot / "model.onnx").string() + "\n");
  EXPECT_EQ(Requests().size(), before);
}

TEST_F(FetchCliTest, WithoutFilesFetchesEveryFileTheRepositoryLists) {
  StartHub();
  ProcessResult result = Fetch({"org/tiny"});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.out.find("/config.json\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/model.onnx\n"), std::string::npos);
  EXPECT_NE(result.out.find("/sub/notes.txt\n"), std::string::npos);
}

TEST_F(FetchCliTest, OfflineServesTheCacheOnlyAndSaysSoWhenAbsent) {
  StartHub();
  ASSERT_EQ(Fetch({"org/tiny", "model.onnx"}).exit_code, 0);
  const size_t before = Requests().size();
  ProcessResult cached = Fetch({"org/tiny", "model.onnx"}, {"HF_HUB_OFFLINE=1"});
  ASSERT_EQ(cached.exit_code, 0) << Describe(cached);
  EXPECT_NE(cached.out.find("/model.onnx"), std::string::npos);
  ProcessResult absent = Fetch({"org/tiny", "config.json"}, {"HF_HUB_OFFLINE=1"});
  EXPECT_EQ(absent.exit_code, 3) << Describe(absent);
  EXPECT_NE(absent.err.find("HF_HUB_OFFLINE is set and 'config.json' of org/tiny at main is not "
                            "in the cache"),
            std::string::npos)
      << absent.err;
  // Without FILE: every file the cached snapshot holds.
  ProcessResult all = Fetch({"org/tiny"}, {"HF_HUB_OFFLINE=1"});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  EXPECT_EQ(all.out, cached.out);
  ProcessResult none = Fetch({"org/other"}, {"HF_HUB_OFFLINE=1"});
  EXPECT_EQ(none.exit_code, 3) << Describe(none);
  EXPECT_NE(
      none.err.find("HF_HUB_OFFLINE is set and the cache has no snapshot of org/other at main"),
      std::string::npos)
      << none.err;
  ProcessResult exists = Fetch({"org/tiny", "config.json", "--check-exists"}, {"HF_HUB_OFFLINE=1"});
  EXPECT_EQ(exists.exit_code, 1) << Describe(exists);
  EXPECT_EQ(Requests().size(), before);
}

TEST_F(FetchCliTest, CheckExistsDownloadsNothing) {
  StartHub();
  ProcessResult present = Fetch({"org/tiny", "model.onnx", "sub/notes.txt", "--check-exists"});
  EXPECT_EQ(present.exit_code, 0) << Describe(present);
  EXPECT_NE(present.out.find("model.onnx: exists in org/tiny at main"), std::string::npos);
  ProcessResult missing = Fetch({"org/tiny", "model.onnx", "nope.onnx", "--check-exists"});
  EXPECT_EQ(missing.exit_code, 1) << Describe(missing);
  EXPECT_NE(missing.out.find("nope.onnx: not found in org/tiny at main"), std::string::npos);
  ProcessResult no_repo = Fetch({"org/none", "model.onnx", "--check-exists"});
  EXPECT_EQ(no_repo.exit_code, 1) << Describe(no_repo);
  EXPECT_EQ(CountRequests("GET", "/"), 0u);
  EXPECT_TRUE(CacheFiles().empty());
}

TEST_F(FetchCliTest, MetadataFromTheApi) {
  StartHub();
  ProcessResult text = Fetch({"org/tiny", "--metadata"});
  ASSERT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_NE(text.out.find("model type:    bert\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("architectures: BertModel\n"), std::string::npos);
  EXPECT_NE(text.out.find("pipeline tag:  fill-mask\n"), std::string::npos);
  EXPECT_NE(text.out.find("license:       mit\n"), std::string::npos);
  EXPECT_NE(text.out.find("  model.onnx  " + std::to_string(fs::file_size(kTinyCnn)) + " B\n"),
            std::string::npos);
  ProcessResult json = Fetch({"org/tiny", "--metadata", "--json"});
  ASSERT_EQ(json.exit_code, 0) << Describe(json);
  const nlohmann::json info = nlohmann::json::parse(json.out);
  EXPECT_EQ(info["commit"].get<std::string>().size(), 40u);
  EXPECT_EQ(info["files"].size(), 3u);
  EXPECT_TRUE(CacheFiles().empty());
}

TEST_F(FetchCliTest, UsageErrorsComeBeforeAnyRequest) {
  StartHub();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"org/../x", "model.onnx"},
        std::vector<std::string>{"org/tiny", "../../etc/passwd"},
        std::vector<std::string>{"org/tiny", "--check-exists"},
        std::vector<std::string>{"org/tiny", "model.onnx", "--metadata"},
        std::vector<std::string>{"org/tiny", "model.onnx", "--revision", "../main"}}) {
    ProcessResult result = Fetch(args);
    EXPECT_EQ(result.exit_code, 2) << Describe(result);
  }
  ProcessResult env = Fetch({"org/tiny", "model.onnx"}, {"CONVGATE_HUB_ATTEMPTS=zero"});
  EXPECT_EQ(env.exit_code, 2) << Describe(env);
  EXPECT_NE(env.err.find("CONVGATE_HUB_ATTEMPTS='zero'"), std::string::npos);
  EXPECT_TRUE(Requests().empty());
}

TEST_F(FetchCliTest, MissingFileIsExit3NamingIt) {
  StartHub();
  ProcessResult result = Fetch({"org/tiny", "nope.onnx"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  EXPECT_NE(result.err.find("'nope.onnx' of org/tiny at main: not found (HTTP 404, EntryNotFound)"),
            std::string::npos)
      << result.err;
  EXPECT_TRUE(CacheFiles().empty());
}

// --- faults ---

TEST_F(FetchCliTest, ConnectionDroppedMidBodyResumesWithRange) {
  StartHub({"--fault", "drop:/cdn/:1"});
  ProcessResult result = Fetch({"org/tiny", "model.onnx"});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.err.find("connection broke off"), std::string::npos) << result.err;
  EXPECT_EQ(ReadAll(Cache() / "models--org--tiny/snapshots" / Commit() / "model.onnx"),
            ReadAll(kTinyCnn));
  // The second GET asked for the rest only.
  const size_t half = fs::file_size(kTinyCnn) / 2;
  bool resumed = false;
  for (const nlohmann::json& request : Requests()) {
    if (request["range"] == "bytes=" + std::to_string(half) + "-") resumed = true;
  }
  EXPECT_TRUE(resumed);
  ExpectNoPartialFiles();
}

TEST_F(FetchCliTest, TooManyDropsFailAfterTheAttemptsLeavingNothing) {
  StartHub({"--fault", "drop:/cdn/:100"});
  ProcessResult result = Fetch({"org/tiny", "model.onnx"}, {"CONVGATE_HUB_ATTEMPTS=3"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  EXPECT_NE(result.err.find("model.onnx: connection broke off"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("(3 attempts; HF_HUB_OFFLINE=1 serves files already in the cache"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 3u);
  ExpectNoPartialFiles();
  EXPECT_TRUE(CacheFiles().empty() || CacheFiles(".lock").size() == CacheFiles().size());
}

// Every "retry n/m in S s" line of stderr: the waits.
std::vector<double> RetryWaits(const std::string& err) {
  std::vector<double> waits;
  const std::regex line("retry [0-9]+/[0-9]+ in ([0-9.]+) s");
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
       ++it) {
    waits.push_back(std::stod((*it)[1]));
  }
  return waits;
}

TEST_F(FetchCliTest, ServiceUnavailableTwiceThenOkWaitsWithinTheBackoffBounds) {
  StartHub({"--fault", "503:/resolve/:2"});
  const auto start = std::chrono::steady_clock::now();
  ProcessResult result = Fetch({"org/tiny", "config.json"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  const std::vector<double> waits = RetryWaits(result.err);
  ASSERT_EQ(waits.size(), 2u) << result.err;
  EXPECT_LE(waits[0], 0.05);  // base 0.05 * 2^0
  EXPECT_LE(waits[1], 0.1);   // base 0.05 * 2^1
  EXPECT_NE(result.err.find("HTTP 503"), std::string::npos);
  EXPECT_LT(seconds, 10);
  EXPECT_EQ(CountRequests("HEAD", "/resolve/main/config.json"), 3u);
}

TEST_F(FetchCliTest, TooManyRequestsHonoursRetryAfter) {
  StartHub({"--fault", "429:/cdn/:1:1"});
  const auto start = std::chrono::steady_clock::now();
  ProcessResult result = Fetch({"org/tiny", "model.onnx"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_EQ(RetryWaits(result.err), std::vector<double>{1.0}) << result.err;
  EXPECT_GE(seconds, 1.0);
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 2u);
}

TEST_F(FetchCliTest, RetryAfterOverTheMaximumFailsAtOnce) {
  StartHub({"--fault", "429:/resolve/:1:600"});
  ProcessResult result = Fetch({"org/tiny", "config.json"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  EXPECT_NE(result.err.find("retry after 600 s, over the maximum of 120 s"), std::string::npos)
      << result.err;
}

TEST_F(FetchCliTest, TruncatedBodyIsDownloadedAgainFromZero) {
  StartHub({"--fault", "truncate:/cdn/:1"});
  ProcessResult result = Fetch({"org/tiny", "model.onnx"});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(
      result.err.find("model.onnx: downloaded " + std::to_string(fs::file_size(kTinyCnn) - 10) +
                      " bytes, the hub announced " + std::to_string(fs::file_size(kTinyCnn))),
      std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("downloading it again from zero"), std::string::npos);
  EXPECT_EQ(ReadAll(Cache() / "models--org--tiny/snapshots" / Commit() / "model.onnx"),
            ReadAll(kTinyCnn));
  ExpectNoPartialFiles();
}

TEST_F(FetchCliTest, WrongHashOnceIsDownloadedAgain) {
  StartHub({"--fault", "wronghash:/cdn/:1"});
  ProcessResult result = Fetch({"org/tiny", "model.onnx"});
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.err.find("sha256 mismatch"), std::string::npos) << result.err;
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 2u);
  EXPECT_EQ(ReadAll(Cache() / "models--org--tiny/snapshots" / Commit() / "model.onnx"),
            ReadAll(kTinyCnn));
}

TEST_F(FetchCliTest, WrongHashTwiceIsExit3NamingBothHashes) {
  StartHub({"--fault", "wronghash:/cdn/:2"});
  ProcessResult result = Fetch({"org/tiny", "model.onnx"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  Result<std::string> expected = Sha256File(kTinyCnn);
  ASSERT_TRUE(expected.ok());
  std::string flipped = ReadAll(kTinyCnn);
  flipped[0] = static_cast<char>(flipped[0] ^ 0xFF);
  EXPECT_NE(result.err.find("downloaded twice: model.onnx: sha256 mismatch: expected " + *expected +
                            ", got " + Sha256Hex(flipped)),
            std::string::npos)
      << result.err;
  ExpectNoPartialFiles();
  for (const fs::path& file : CacheFiles()) {
    EXPECT_TRUE(file.string().ends_with(".lock")) << file;  // no blob, no link
  }
}

TEST_F(FetchCliTest, WrongGitHashOfARegularFileIsCaughtToo) {
  StartHub({"--fault", "wronghash:/resolve/main/config.json:2"});
  ProcessResult result = Fetch({"org/tiny", "config.json"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  EXPECT_NE(result.err.find("config.json: git blob sha1 mismatch: expected "), std::string::npos)
      << result.err;
  ExpectNoPartialFiles();
}

TEST_F(FetchCliTest, StalledTransferTimesOutAndResumes) {
  StartHub({"--fault", "stall:/cdn/:1:20"});
  const auto start = std::chrono::steady_clock::now();
  ProcessResult result = Fetch({"org/tiny", "model.onnx"}, {"CONVGATE_HUB_STALL_TIMEOUT=1"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_NE(result.err.find("timed out (less than 1024 bytes a second received for 1 s)"),
            std::string::npos)
      << result.err;
  // The stall lasts 20 s; it is noticed 1-2 s in (checked about once a second), plus start-up.
  EXPECT_LT(seconds, 8);
  EXPECT_EQ(ReadAll(Cache() / "models--org--tiny/snapshots" / Commit() / "model.onnx"),
            ReadAll(kTinyCnn));
  ExpectNoPartialFiles();
}

TEST_F(FetchCliTest, UnreachableHubIsExit3AfterTheRetries) {
  StartHub();
  const std::string closed = "http://127.0.0.1:1";  // nothing listens on port 1
  ProcessResult result =
      Fetch({"org/tiny", "model.onnx"}, {"HF_ENDPOINT=" + closed, "CONVGATE_HUB_ATTEMPTS=2"});
  EXPECT_EQ(result.exit_code, 3) << Describe(result);
  EXPECT_NE(result.err.find("cannot connect"), std::string::npos) << result.err;
  EXPECT_EQ(RetryWaits(result.err).size(), 1u);
}

// --- the token ---

TEST_F(FetchCliTest, PrivateRepositoryNeedsTheTokenWhichNeverLeavesTheHubsHost) {
  StartHub();
  ProcessResult refused = Fetch({"org/private", "model.onnx"});
  EXPECT_EQ(refused.exit_code, 3) << Describe(refused);
  EXPECT_NE(refused.err.find("HTTP 401 unauthorized (a private or gated repository needs a token"),
            std::string::npos)
      << refused.err;
  ProcessResult wrong = Fetch({"org/private", "model.onnx", "--token", "hf_wrong"});
  EXPECT_EQ(wrong.exit_code, 3) << Describe(wrong);
  EXPECT_NE(wrong.err.find("the token was refused"), std::string::npos) << wrong.err;

  std::vector<ProcessResult> results;
  results.push_back(
      Fetch({"org/private", "model.onnx", "--json"}, {std::string("HF_TOKEN=") + kToken}));
  results.push_back(Fetch({"org/private", "model.onnx", "--check-exists", "--token", kToken}));
  results.push_back(Fetch({"org/private", "--metadata", "--token", kToken}));
  std::ofstream(dir_ / "hfhome/token") << kToken << "\n";  // as `huggingface-cli login` writes it
  results.push_back(Fetch({"org/private", "model.onnx"}, {"HF_HUB_CACHE=" + Path("cache2")}));
  for (const ProcessResult& result : results) {
    EXPECT_EQ(result.exit_code, 0) << Describe(result);
    EXPECT_EQ(result.out.find(kToken), std::string::npos) << result.out;
    EXPECT_EQ(result.err.find(kToken), std::string::npos) << result.err;
  }
  EXPECT_EQ(ReadAll(Path("cache2/models--org--private/snapshots/") +
                    nlohmann::json::parse(results[0].out)["files"][0]["commit"].get<std::string>() +
                    "/model.onnx"),
            ReadAll(kTinyCnn));
  // Sent to the hub's host, never to the CDN's (localhost, another host name).
  size_t with_token = 0;
  for (const nlohmann::json& request : Requests()) {
    const bool cdn = request["host"].get<std::string>().starts_with("localhost");
    if (cdn) {
      EXPECT_TRUE(request["authorization"].is_null()) << request.dump();
    } else if (request["authorization"] == std::string("Bearer ") + kToken) {
      ++with_token;
    }
  }
  EXPECT_GE(with_token, 4u);
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 2u);
  // Nothing convgate wrote holds it.
  for (const fs::path& cache : {Cache(), dir_ / "cache2"}) {
    for (const auto& entry : fs::recursive_directory_iterator(cache)) {
      if (entry.is_regular_file()) {
        EXPECT_EQ(ReadAll(entry.path()).find(kToken), std::string::npos) << entry.path();
      }
    }
  }
}

// --- hf:// model arguments ---

TEST_F(FetchCliTest, CommandsTakeModelsById) {
  StartHub();
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = HubEnvArgv(*hub_, Cache(), dir_ / "hfhome");
    argv.push_back(Binary().string());
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  ProcessResult inspect = run({"inspect", "hf://org/tiny/model.onnx", "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  Result<std::string> sha256 = Sha256File(kTinyCnn);
  ASSERT_TRUE(sha256.ok());
  EXPECT_NE(inspect.out.find(*sha256), std::string::npos) << inspect.out;
  ProcessResult pinned = run({"run", "hf://org/tiny@" + Commit() + "/model.onnx"});
  EXPECT_EQ(pinned.exit_code, 0) << Describe(pinned);
  ProcessResult compare = run({"compare", "hf://org/tiny/model.onnx", kTinyCnn.string()});
  EXPECT_EQ(compare.exit_code, 0) << Describe(compare);
  EXPECT_EQ(CountRequests("GET", "/cdn/"), 1u);  // downloaded once, then from the cache
  ProcessResult malformed = run({"inspect", "hf://org/tiny"});
  EXPECT_EQ(malformed.exit_code, 2) << Describe(malformed);
  EXPECT_NE(malformed.err.find("expected hf://org/name[@revision]/path/in/repo"),
            std::string::npos);
  ProcessResult missing = run({"run", "hf://org/tiny/nope.onnx"});
  EXPECT_EQ(missing.exit_code, 3) << Describe(missing);
  EXPECT_NE(missing.err.find("hf://org/tiny/nope.onnx: 'nope.onnx' of org/tiny at main: not found"),
            std::string::npos)
      << missing.err;
}

// --- huggingface_hub shares the cache ---

class HuggingfaceHubCompatTest : public FetchCliTest {
 protected:
  void SetUp() override {
    FetchCliTest::SetUp();
    python_ = ProjectVenvPython();
    if (!fs::exists(python_))
      GTEST_SKIP() << "no project venv at " << python_ << " (scripts/setup.sh)";
  }

  // hf_hub_download(repo, file, **kwargs) in the venv; returns its result (the path) or the error.
  ProcessResult HfHubDownload(const std::string& file, const std::string& kwargs,
                              std::vector<std::string> env = {}) {
    env.insert(env.begin(), "HF_HUB_DISABLE_TELEMETRY=1");
    std::vector<std::string> argv = HubEnvArgv(*hub_, Cache(), dir_ / "hfhome", env);
    argv.insert(argv.end(), {python_.string(), "-c",
                             "import sys\nfrom huggingface_hub import hf_hub_download\n"
                             "print(hf_hub_download('org/tiny', sys.argv[1]" +
                                 kwargs + "))",
                             file});
    return RunProcess(argv);
  }

  fs::path python_;
};

TEST_F(HuggingfaceHubCompatTest, FilesHuggingfaceHubDownloadedNeedNoRequest) {
  StartHub();
  ProcessResult model = HfHubDownload("model.onnx", "");
  ASSERT_EQ(model.exit_code, 0) << Describe(model);
  ProcessResult notes = HfHubDownload("sub/notes.txt", "");
  ASSERT_EQ(notes.exit_code, 0) << Describe(notes);
  const size_t downloads = CountRequests("GET", "/");
  const size_t before = Requests().size();

  ProcessResult offline = Fetch({"org/tiny", "model.onnx", "sub/notes.txt"}, {"HF_HUB_OFFLINE=1"});
  ASSERT_EQ(offline.exit_code, 0) << Describe(offline);
  EXPECT_EQ(offline.out, model.out + notes.out);
  ProcessResult pinned = Fetch({"org/tiny", "model.onnx", "--revision", Commit()});
  ASSERT_EQ(pinned.exit_code, 0) << Describe(pinned);
  EXPECT_EQ(pinned.out, model.out);
  EXPECT_EQ(Requests().size(), before);
  // Online at main: HEAD requests (main may have moved), no download.
  ProcessResult online = Fetch({"org/tiny", "model.onnx", "sub/notes.txt", "--json"});
  ASSERT_EQ(online.exit_code, 0) << Describe(online);
  for (const nlohmann::json& file : nlohmann::json::parse(online.out)["files"]) {
    EXPECT_EQ(file["downloaded"], false);
  }
  EXPECT_EQ(CountRequests("GET", "/"), downloads);
}

TEST_F(HuggingfaceHubCompatTest, FilesConvgateDownloadedAreFoundOffline) {
  StartHub();
  ProcessResult fetched = Fetch({"org/tiny", "model.onnx", "config.json", "sub/notes.txt"});
  ASSERT_EQ(fetched.exit_code, 0) << Describe(fetched);
  std::string found;
  for (const char* file : {"model.onnx", "config.json", "sub/notes.txt"}) {
    ProcessResult local = HfHubDownload(file, ", local_files_only=True");
    ASSERT_EQ(local.exit_code, 0) << Describe(local);
    found += local.out;
    ProcessResult offline = HfHubDownload(file, "", {"HF_HUB_OFFLINE=1"});
    ASSERT_EQ(offline.exit_code, 0) << Describe(offline);
    EXPECT_EQ(offline.out, local.out);
  }
  EXPECT_EQ(found, fetched.out);
  // Online, huggingface_hub finds the blobs and downloads nothing either.
  const size_t downloads = CountRequests("GET", "/");
  ProcessResult online = HfHubDownload("model.onnx", "");
  ASSERT_EQ(online.exit_code, 0) << Describe(online);
  EXPECT_EQ(CountRequests("GET", "/"), downloads);
}

}  // namespace
}  // namespace convgate::testing
