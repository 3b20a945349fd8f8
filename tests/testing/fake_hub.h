// tests/fixtures/fake_hub.py (a fake Hugging Face Hub: Python's http.server on 127.0.0.1, a free
// port) as a child process of a test, and the environment that points convgate at it.
#pragma once

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"
#include "testing/subprocess.h"

namespace convgate::testing {

inline std::string ReadWholeFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fake hub serving REPOS/org/name/<files>; stopped (SIGTERM by its pid) when this goes away.
// `extra`: more arguments (--fault, --private, --token).
class FakeHub {
 public:
  FakeHub(const std::filesystem::path& repos, const std::filesystem::path& log,
          const std::vector<std::string>& extra) {
    const std::filesystem::path script =
        std::filesystem::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/fake_hub.py";
    std::vector<std::string> argv = {"/usr/bin/python3", script.string(), "--repos",
                                     repos.string(),     "--log",         log.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    process_ = StartProcess(argv);
    const std::regex port_line("PORT ([0-9]+)");
    WaitFor(
        [&] {
          std::smatch match;
          const std::string out = ReadWholeFile(process_.out_path);
          if (!std::regex_search(out, match, port_line)) return false;
          port_ = std::stoi(match[1]);
          return true;
        },
        30);
  }
  ~FakeHub() {
    if (process_.pid > 0) {
      kill(process_.pid, SIGTERM);
      WaitProcess(process_);
    }
  }
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  StartedProcess process_;
  int port_ = 0;
};

// The start of an argv that runs a program pointed at `hub` through /usr/bin/env: without the
// test's own HF_TOKEN and HF_HUB_OFFLINE, with the hub cache `cache` and HF_HOME `home`, and
// backoffs of milliseconds (a test waits for its retries); then `env` (NAME=VALUE entries).
inline std::vector<std::string> HubEnvArgv(const FakeHub& hub, const std::filesystem::path& cache,
                                           const std::filesystem::path& home,
                                           const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "-u",
                                   "HF_TOKEN",
                                   "-u",
                                   "HF_HUB_OFFLINE",
                                   "HF_ENDPOINT=" + hub.endpoint(),
                                   "HF_HUB_CACHE=" + cache.string(),
                                   "HF_HOME=" + home.string(),
                                   "CONVGATE_HUB_BACKOFF_BASE=0.05",
                                   "CONVGATE_HUB_BACKOFF_MAX=0.2"};
  argv.insert(argv.end(), env.begin(), env.end());
  return argv;
}

// The requests the hub logged so far (one JSON line each).
inline size_t HubRequestCount(const std::filesystem::path& log) {
  std::ifstream in(log);
  size_t count = 0;
  for (std::string line; std::getline(in, line);) ++count;
  return count;
}

// CliTest with a fake hub serving REPOS = <test folder>/repos (StartHub), and convgate run against
// it with the hub cache <test folder>/<cache>.
class HubCliTest : public CliTest {
 protected:
  void StartHub(const std::vector<std::string>& extra = {}) {
    hub_ = std::make_unique<FakeHub>(dir_ / "repos", dir_ / "requests.jsonl", extra);
    ASSERT_GT(hub_->port(), 0) << "the fake hub did not start";
  }

  ProcessResult RunWithHub(const std::vector<std::string>& args, const std::string& cache,
                           const std::vector<std::string>& env) {
    std::vector<std::string> argv = HubEnvArgv(*hub_, dir_ / cache, dir_ / "hfhome", env);
    argv.push_back(Binary().string());
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    EXPECT_EQ(result.signal, 0) << "convgate crashed; stderr:\n" << result.err;
    return result;
  }

  nlohmann::json ReadJson(const std::string& name) const {
    std::ifstream in(dir_ / name);
    EXPECT_TRUE(in.good()) << "missing " << name;
    return in.good() ? nlohmann::json::parse(in) : nlohmann::json::object();
  }

  size_t RequestCount() const { return HubRequestCount(dir_ / "requests.jsonl"); }

  // The hub writes its request log into dir_: stop it before the folder is removed.
  void TearDown() override {
    hub_.reset();
    CliTest::TearDown();
  }

  std::unique_ptr<FakeHub> hub_;
};

}  // namespace convgate::testing
