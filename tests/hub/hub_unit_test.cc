// The hub module's pure parts: names and URLs, cache paths, backoff bounds, Retry-After, the API's
// JSON, the environment's settings. No server (label unit).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "convgate/core/temp_dir.h"
#include "convgate/hub/hub.h"
#include "hub/cache_layout.h"
#include "hub/names.h"
#include "hub/repo_info.h"
#include "hub/retry.h"

namespace convgate::hub {
namespace {

namespace fs = std::filesystem;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";

TEST(HubNames, RepoIds) {
  EXPECT_TRUE(CheckRepoId("org/name").ok());
  EXPECT_TRUE(CheckRepoId("bert-base-uncased").ok());
  EXPECT_TRUE(CheckRepoId("google/vit-base-patch16_224.v2").ok());
  for (const char* bad : {"", "/name", "org/", "a/b/c", "org/na me", "org--x/name", "org/../x",
                          "org/x..y", "org/n\xc3\xa9"}) {
    const Status status = CheckRepoId(bad);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(status.message().find("repository id '"), std::string::npos) << status.message();
  }
  EXPECT_FALSE(CheckRepoId(std::string(97, 'a')).ok());
}

TEST(HubNames, FilesCannotLeaveTheSnapshot) {
  EXPECT_TRUE(CheckRepoFile("model.onnx").ok());
  EXPECT_TRUE(CheckRepoFile("onnx/decoder model.onnx").ok());
  for (const char* bad :
       {"", "/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "a/", "a\\b", "a\nb", "."}) {
    EXPECT_EQ(CheckRepoFile(bad).code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(HubNames, Revisions) {
  EXPECT_TRUE(CheckRevision("main").ok());
  EXPECT_TRUE(CheckRevision("refs/pr/1").ok());
  EXPECT_TRUE(CheckRevision(kCommit).ok());
  for (const char* bad : {"", "/main", "../main", "a..b", "ma\tin"}) {
    EXPECT_FALSE(CheckRevision(bad).ok()) << bad;
  }
}

TEST(HubNames, UrlsAreEscapedAsHuggingfaceHubEscapesThem) {
  EXPECT_EQ(ResolveUrl("http://h:1", "org/m", "main", "onnx/model v2.onnx"),
            "http://h:1/org/m/resolve/main/onnx/model%20v2.onnx");
  EXPECT_EQ(ResolveUrl("https://hf.co", "m", "refs/pr/1", "a+b.json"),
            "https://hf.co/m/resolve/refs%2Fpr%2F1/a%2Bb.json");
  EXPECT_EQ(ModelInfoUrl("https://hf.co", "org/m", ""),
            "https://hf.co/api/models/org/m?blobs=true");
  EXPECT_EQ(ModelInfoUrl("https://hf.co", "org/m", "v1.0"),
            "https://hf.co/api/models/org/m/revision/v1.0?blobs=true");
}

TEST(HubNames, Etags) {
  EXPECT_EQ(NormalizeEtag("W/\"abc\""), "abc");
  EXPECT_EQ(NormalizeEtag("\"abc\""), "abc");
  EXPECT_EQ(NormalizeEtag("abc"), "abc");
  EXPECT_TRUE(IsSafeEtag("0123abc-_"));
  EXPECT_FALSE(IsSafeEtag(""));
  EXPECT_FALSE(IsSafeEtag("../x"));
  EXPECT_FALSE(IsSafeEtag("a.incomplete"));
  EXPECT_FALSE(IsSafeEtag(std::string(129, 'a')));
  EXPECT_TRUE(IsCommitHash(kCommit));
  EXPECT_FALSE(IsCommitHash("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_TRUE(IsSha256(std::string(64, 'f')));
  EXPECT_FALSE(IsSha256(std::string(63, 'f')));
}

TEST(HubUri, ModelsById) {
  Result<HfUri> plain = ParseHfUri("hf://org/name/onnx/model.onnx");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->repo_id, "org/name");
  EXPECT_EQ(plain->revision, "main");
  EXPECT_EQ(plain->file, "onnx/model.onnx");
  Result<HfUri> pinned = ParseHfUri("hf://org/name@refs%2Fpr%2F1/model.onnx");
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(pinned->repo_id, "org/name");
  EXPECT_EQ(pinned->revision, "refs/pr/1");
  // A repository without an org: its revision ends the id.
  Result<HfUri> single = ParseHfUri("hf://bert-base-uncased@main/onnx/model.onnx");
  ASSERT_TRUE(single.ok()) << single.status().ToString();
  EXPECT_EQ(single->repo_id, "bert-base-uncased");
  EXPECT_EQ(single->revision, "main");
  EXPECT_EQ(single->file, "onnx/model.onnx");
  // FormatHfUri writes what ParseHfUri reads back, the revision's '/' escaped.
  for (const HfUri& uri : {*plain, *pinned, *single}) {
    Result<HfUri> again = ParseHfUri(FormatHfUri(uri));
    ASSERT_TRUE(again.ok()) << FormatHfUri(uri);
    EXPECT_EQ(again->repo_id, uri.repo_id);
    EXPECT_EQ(again->revision, uri.revision);
    EXPECT_EQ(again->file, uri.file);
  }
  EXPECT_EQ(FormatHfUri(*pinned), "hf://org/name@refs%2Fpr%2F1/model.onnx");
  EXPECT_TRUE(IsHfUri("hf://x"));
  EXPECT_FALSE(IsHfUri("model.onnx"));
  for (const char* bad : {"hf://", "hf://org", "hf://org/name", "hf://org/name/",
                          "hf://org/name@/m", "hf://org/name/../m.onnx", "hf://o--x/name/m.onnx",
                          "http://org/n/m", "hf://name@main", "hf://name@main/"}) {
    Result<HfUri> uri = ParseHfUri(bad);
    ASSERT_FALSE(uri.ok()) << bad;
    EXPECT_EQ(uri.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(uri.status().message().find("expected hf://org/name[@revision]/path/in/repo"),
              std::string::npos);
  }
}

// verify's SOURCE as a whole repository: hf://org/name[@rev], or a bare org/name that is not a
// file's name; anything naming a file is ParseHfUri's.
TEST(HubUri, RepositoriesById) {
  Result<HfUri> repo = ParseHfRepoUri("hf://org/gpt2");
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_EQ(repo->repo_id, "org/gpt2");
  EXPECT_EQ(repo->revision, "main");
  EXPECT_TRUE(repo->file.empty());
  repo = ParseHfRepoUri("hf://org/gpt2@refs%2Fpr%2F3");
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  EXPECT_EQ(repo->revision, "refs/pr/3");
  EXPECT_TRUE(ParseHfRepoUri("hf://bert-base-uncased").ok());
  // A file, with or without a pinned revision, is no repository.
  EXPECT_FALSE(ParseHfRepoUri("hf://org/gpt2/model.onnx").ok());
  EXPECT_FALSE(ParseHfRepoUri("hf://org/tiny@" + std::string(40, 'a') + "/model.onnx").ok());
  EXPECT_FALSE(ParseHfRepoUri("org/gpt2").ok());

  EXPECT_TRUE(LooksLikeHubId("openai/gpt2"));
  EXPECT_TRUE(LooksLikeHubId("org/bert-base.v2"));
  EXPECT_FALSE(LooksLikeHubId("models/missing.onnx"));
  EXPECT_FALSE(LooksLikeHubId("runs/config.json"));
  EXPECT_FALSE(LooksLikeHubId("gpt2"));
  EXPECT_FALSE(LooksLikeHubId("/abs/path"));
  EXPECT_FALSE(LooksLikeHubId("a/b/c"));
  EXPECT_FALSE(LooksLikeHubId("hf://org/gpt2"));
}

TEST(HubHttp, OriginsSpellDefaultPortsOut) {
  EXPECT_EQ(UrlOrigin("https://HuggingFace.co/a/b"), "https://huggingface.co:443");
  EXPECT_EQ(UrlOrigin("https://huggingface.co:443/x"), "https://huggingface.co:443");
  EXPECT_EQ(UrlOrigin("http://127.0.0.1:8080/x"), "http://127.0.0.1:8080");
  EXPECT_NE(UrlOrigin("http://127.0.0.1:8080/x"), UrlOrigin("http://localhost:8080/x"));
  EXPECT_EQ(UrlOrigin("not a url"), "");
  Result<std::string> relative = ResolveLocation("http://h:1/org/m/resolve/main/x", "/api/y");
  ASSERT_TRUE(relative.ok());
  EXPECT_EQ(*relative, "http://h:1/api/y");
}

TEST(HubRetry, FullJitterStaysWithinTheCeiling) {
  RetryPolicy policy;
  policy.backoff_base_seconds = 0.5;
  policy.backoff_max_seconds = 3;
  EXPECT_DOUBLE_EQ(BackoffSeconds(policy, 0, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(policy, 0, 0.999), 0.4995);
  EXPECT_DOUBLE_EQ(BackoffSeconds(policy, 2, 0.5), 1.0);      // ceiling 0.5 * 4 = 2
  EXPECT_DOUBLE_EQ(BackoffSeconds(policy, 3, 0.999), 2.997);  // capped at 3
  EXPECT_DOUBLE_EQ(BackoffSeconds(policy, 1000, 1.0), 3.0);   // no overflow
  for (int retry = 0; retry < 70; ++retry) {
    EXPECT_LE(BackoffSeconds(policy, retry, 1.0), 3.0);
    EXPECT_GE(BackoffSeconds(policy, retry, 0.0), 0.0);
  }
}

TEST(HubRetry, RetryAfter) {
  EXPECT_EQ(ParseRetryAfter("3", 0), 3.0);
  EXPECT_EQ(ParseRetryAfter("0", 0), 0.0);
  EXPECT_EQ(ParseRetryAfter("", 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-1", 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("1.5", 0), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("99999999999", 0), std::nullopt);
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7.0);
  EXPECT_EQ(ParseRetryAfter("Sun, 06 Nov 1994 08:49:37 GMT", 784111790), 0.0);
  EXPECT_EQ(ParseRetryAfter("tomorrow", 0), std::nullopt);
}

TEST(HubRetry, WhatIsTransient) {
  HttpResponse response;
  for (long status : {429L, 500L, 502L, 503L, 504L}) {
    response.status = status;
    EXPECT_TRUE(IsTransient(response)) << status;
  }
  for (long status : {200L, 206L, 302L, 401L, 403L, 404L, 416L}) {
    response.status = status;
    EXPECT_FALSE(IsTransient(response)) << status;
  }
  response.status = 0;
  response.transport = TransportError::kBrokenOff;
  EXPECT_TRUE(IsTransient(response));
  response.transport = TransportError::kTimeout;
  EXPECT_TRUE(IsTransient(response));
  response.transport = TransportError::kOther;  // TLS, malformed: retrying will not help
  EXPECT_FALSE(IsTransient(response));
}

TEST(HubRetry, GivesUpAfterTheAttemptsAndKeepsTheLastResponse) {
  RetryPolicy policy;
  policy.attempts = 3;
  policy.backoff_base_seconds = 0.001;
  policy.backoff_max_seconds = 0.002;
  int calls = 0;
  Result<HttpResponse> result = WithRetries(policy, "test", [&]() -> Result<HttpResponse> {
    ++calls;
    HttpResponse response;
    response.status = 503;
    return response;
  });
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->status, 503);
  EXPECT_EQ(calls, 3);
}

TEST(HubRetry, RetryAfterOverTheMaximumFailsAtOnce) {
  RetryPolicy policy;
  policy.retry_after_max_seconds = 5;
  int calls = 0;
  Result<HttpResponse> result = WithRetries(policy, "GET x", [&]() -> Result<HttpResponse> {
    ++calls;
    HttpResponse response;
    response.status = 429;
    response.headers["retry-after"] = "3600";
    return response;
  });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_NE(result.status().message().find("retry after 3600 s"), std::string::npos)
      << result.status().message();
}

TEST(HubCache, LayoutIsHuggingfaceHubs) {
  const RepoCache cache("/c", "org/name");
  EXPECT_EQ(cache.repo, fs::path("/c/models--org--name"));
  EXPECT_EQ(RepoFolderName("bert-base-uncased"), "models--bert-base-uncased");
  EXPECT_EQ(cache.Blob("e"), fs::path("/c/models--org--name/blobs/e"));
  EXPECT_EQ(cache.Incomplete("e"), fs::path("/c/models--org--name/blobs/e.incomplete"));
  EXPECT_EQ(cache.Snapshot(kCommit, "a/b.onnx"),
            fs::path("/c/models--org--name/snapshots/" + kCommit + "/a/b.onnx"));
  EXPECT_EQ(cache.Ref("refs/pr/1"), fs::path("/c/models--org--name/refs/refs/pr/1"));
  EXPECT_EQ(cache.Lock("e"), fs::path("/c/.locks/models--org--name/e.lock"));
}

TEST(HubCache, SnapshotLinksAreRelativeAndFound) {
  Result<TempDir> temp = TempDir::Create("hub-unit");
  ASSERT_TRUE(temp.ok()) << temp.status().ToString();
  const RepoCache cache(temp->path(), "org/name");
  fs::create_directories(cache.repo / "blobs");
  std::ofstream(cache.Blob("abc")) << "bytes";
  ASSERT_TRUE(LinkSnapshot(cache, kCommit, "sub/dir/m.onnx", "abc").ok());
  EXPECT_EQ(fs::read_symlink(cache.Snapshot(kCommit, "sub/dir/m.onnx")),
            fs::path("../../../../blobs/abc"));
  ASSERT_TRUE(LinkSnapshot(cache, kCommit, "m.onnx", "abc").ok());
  EXPECT_EQ(fs::read_symlink(cache.Snapshot(kCommit, "m.onnx")), fs::path("../../blobs/abc"));

  EXPECT_FALSE(FindCached(cache, "main", "m.onnx"));  // no ref yet
  ASSERT_TRUE(FindCached(cache, kCommit, "m.onnx"));  // a commit needs none
  ASSERT_TRUE(WriteRef(cache, "main", kCommit).ok());
  std::optional<CachedFile> found = FindCached(cache, "main", "sub/dir/m.onnx");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->commit, kCommit);
  EXPECT_FALSE(FindCached(cache, "main", "other.onnx"));
  // A dangling link (its blob deleted) is not a cached file.
  fs::remove(cache.Blob("abc"));
  EXPECT_FALSE(FindCached(cache, "main", "m.onnx"));
  // A ref holding anything but a commit is ignored.
  std::ofstream(cache.Ref("bad")) << "../../x";
  EXPECT_FALSE(CachedCommit(cache, "bad"));
}

TEST(HubRepoInfo, ReadsTheApiAnswer) {
  const std::string json = R"({"id":"org/m","sha":")" + kCommit + R"(",
    "pipeline_tag":"fill-mask","tags":["license:apache-2.0"],
    "config":{"model_type":"bert","architectures":["BertForMaskedLM"]},
    "siblings":[{"rfilename":"config.json","size":12},
                {"rfilename":"model.onnx","lfs":{"sha256":"x","size":4096}},
                {"rfilename":"README.md"}]})";
  Result<RepoInfo> info = ParseRepoInfo(json, "org/m");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->commit, kCommit);
  EXPECT_EQ(info->model_type, "bert");
  EXPECT_EQ(info->architectures, std::vector<std::string>{"BertForMaskedLM"});
  EXPECT_EQ(info->pipeline_tag, "fill-mask");
  EXPECT_EQ(info->license, "apache-2.0");
  ASSERT_EQ(info->files.size(), 3u);
  EXPECT_EQ(info->files[0].size, 12u);
  EXPECT_EQ(info->files[1].size, 4096u);
  EXPECT_EQ(info->files[2].size, std::nullopt);
}

TEST(HubRepoInfo, RefusesMalformedAnswers) {
  for (const std::string& bad :
       {std::string("not json"), std::string("[]"), std::string(R"({"sha":"short"})"),
        R"({"sha":")" + kCommit + R"(","siblings":{}})",
        R"({"sha":")" + kCommit + R"(","siblings":[{"rfilename":"../etc/passwd"}]})"}) {
    Result<RepoInfo> info = ParseRepoInfo(bad, "org/m");
    ASSERT_FALSE(info.ok()) << bad;
    EXPECT_EQ(info.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(info.status().message().find("org/m"), std::string::npos);
  }
}

// Sets environment variables for one test and restores them.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HubOptions, FromTheEnvironmentAsHuggingfaceHubReadsIt) {
  Result<TempDir> temp = TempDir::Create("hub-env");
  ASSERT_TRUE(temp.ok());
  std::ofstream(temp->path() / "token") << "  file-token\n";
  ScopedEnv home("HF_HOME", temp->path().c_str());
  ScopedEnv token("HF_TOKEN", nullptr);
  ScopedEnv token_path("HF_TOKEN_PATH", nullptr);
  ScopedEnv cache("HF_HUB_CACHE", nullptr);
  ScopedEnv endpoint("HF_ENDPOINT", "http://127.0.0.1:9/");
  ScopedEnv offline("HF_HUB_OFFLINE", "True");
  ScopedEnv attempts("CONVGATE_HUB_ATTEMPTS", "2");
  Result<HubOptions> options = HubOptionsFromEnvironment("");
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->endpoint, "http://127.0.0.1:9");
  EXPECT_EQ(options->token, "file-token");
  EXPECT_EQ(options->cache_dir, temp->path() / "hub");
  EXPECT_TRUE(options->offline);
  EXPECT_EQ(options->retry.attempts, 2);
  {
    ScopedEnv env_token("HF_TOKEN", "env-token");
    EXPECT_EQ(HubOptionsFromEnvironment("")->token, "env-token");
    EXPECT_EQ(HubOptionsFromEnvironment("flag-token")->token, "flag-token");
  }
  {
    ScopedEnv hub_cache("HF_HUB_CACHE", "/somewhere");
    EXPECT_EQ(HubOptionsFromEnvironment("")->cache_dir, fs::path("/somewhere"));
  }
}

TEST(HubOptions, MalformedSettingsNameTheVariable) {
  {
    ScopedEnv endpoint("HF_ENDPOINT", "ftp://x");
    Result<HubOptions> options = HubOptionsFromEnvironment("");
    ASSERT_FALSE(options.ok());
    EXPECT_NE(options.status().message().find("HF_ENDPOINT"), std::string::npos);
  }
  for (const char* bad : {"0", "x", "-1", "1e9"}) {
    ScopedEnv attempts("CONVGATE_HUB_ATTEMPTS", bad);
    Result<HubOptions> options = HubOptionsFromEnvironment("");
    ASSERT_FALSE(options.ok()) << bad;
    EXPECT_NE(options.status().message().find("CONVGATE_HUB_ATTEMPTS"), std::string::npos);
  }
}

}  // namespace
}  // namespace convgate::hub
