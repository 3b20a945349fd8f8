// The conversion cache: verified lookups, atomic publishing, listing, pruning by size and age,
// thresholds from the environment; the cache key; the retry rule.
#include "convgate/convert/cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "convert/key.h"
#include "convert/output.h"
#include "convert/retry.h"
#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"

namespace convgate::convert {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one test and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

class CacheTest : public ::testing::Test {
 protected:
  // Publishes an entry whose model file holds `bytes` bytes, last used `age_seconds` ago.
  fs::path AddEntry(const std::string& key, size_t bytes, int64_t age_seconds) {
    Result<fs::path> work = cache_.NewWorkDir(key);
    EXPECT_TRUE(work.ok()) << work.status().ToString();
    const std::string contents(bytes, 'm');
    EXPECT_TRUE(WriteFileAtomic(*work / "model.onnx", contents).ok());
    CachedConversion record;
    record.key = key;
    record.kind = "fp16";
    record.tool = "test";
    record.model_file = "model.onnx";
    record.model_sha256 = Sha256Hex(contents);
    record.model_bytes = static_cast<int64_t>(bytes);
    record.notes = {"a note"};
    Result<fs::path> published = cache_.Publish(*work, record);
    EXPECT_TRUE(published.ok()) << published.status().ToString();
    SetLastUsed(key, age_seconds);
    return *published;
  }

  void SetLastUsed(const std::string& key, int64_t age_seconds) {
    timespec times[2];
    ::clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= age_seconds;
    times[1] = times[0];
    const fs::path record = cache_.EntriesDir() / key / "record.json";
    ASSERT_EQ(::utimensat(AT_FDCWD, record.c_str(), times, 0), 0);
  }

  std::vector<std::string> Keys() {
    std::vector<std::string> keys;
    Result<std::vector<CacheEntry>> entries = cache_.List();
    EXPECT_TRUE(entries.ok());
    for (const CacheEntry& entry : *entries) keys.push_back(entry.record.key);
    return keys;
  }

  testing::ScopedTempDir dir_;
  ConversionCache cache_{dir_.path()};
};

TEST_F(CacheTest, APublishedEntryIsFoundVerifiedAndListed) {
  const fs::path model = AddEntry("k1", 100, 0);
  EXPECT_EQ(model, dir_.path() / "conversions" / "k1" / "model.onnx");
  Result<CacheLookup> lookup = cache_.Lookup("k1");
  ASSERT_TRUE(lookup.ok());
  EXPECT_EQ(lookup->state, LookupState::kHit);
  EXPECT_EQ(lookup->model_path, model);
  EXPECT_EQ(lookup->record.notes, std::vector<std::string>{"a note"});
  EXPECT_EQ(cache_.Lookup("other")->state, LookupState::kMiss);
  Result<std::vector<CacheEntry>> entries = cache_.List();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_TRUE((*entries)[0].readable);
  EXPECT_GT((*entries)[0].bytes, 100);  // the model and record.json
  EXPECT_TRUE(fs::is_empty(cache_.EntriesDir() / ".tmp"));
}

TEST_F(CacheTest, ATamperedModelFailsVerificationAndTheEntryIsDiscarded) {
  const fs::path model = AddEntry("k1", 100, 0);
  { std::ofstream(model, std::ios::app) << "x"; }
  Result<CacheLookup> lookup = cache_.Lookup("k1");
  ASSERT_TRUE(lookup.ok());
  EXPECT_EQ(lookup->state, LookupState::kCorrupt);
  EXPECT_NE(lookup->problem.find("model.onnx has sha256"), std::string::npos) << lookup->problem;
  EXPECT_FALSE(fs::exists(cache_.EntriesDir() / "k1"));
  EXPECT_EQ(cache_.Lookup("k1")->state, LookupState::kMiss);
}

TEST_F(CacheTest, AMissingOrBrokenRecordIsCorrupt) {
  AddEntry("k1", 10, 0);
  AddEntry("k2", 10, 0);
  fs::remove(cache_.EntriesDir() / "k1" / "record.json");
  { std::ofstream(cache_.EntriesDir() / "k2" / "record.json") << "{not json"; }
  EXPECT_EQ(cache_.Lookup("k1")->state, LookupState::kCorrupt);
  Result<CacheLookup> broken = cache_.Lookup("k2");
  EXPECT_EQ(broken->state, LookupState::kCorrupt);
  EXPECT_NE(broken->problem.find("is not a version 1 conversion record"), std::string::npos);
  EXPECT_TRUE(Keys().empty());
}

TEST_F(CacheTest, LosingAPublishingRaceKeepsTheFirstEntry) {
  const fs::path first = AddEntry("k1", 10, 0);
  Result<fs::path> work = cache_.NewWorkDir("k1");
  ASSERT_TRUE(work.ok());
  ASSERT_TRUE(WriteFileAtomic(*work / "model.onnx", "different").ok());
  CachedConversion record;
  record.key = "k1";
  record.model_file = "model.onnx";
  record.model_sha256 = Sha256Hex("different");
  Result<fs::path> second = cache_.Publish(*work, record);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(*second, first);
  EXPECT_FALSE(fs::exists(*work));
  EXPECT_EQ(cache_.Lookup("k1")->state, LookupState::kHit);  // still the first, consistent
}

TEST_F(CacheTest, PruneRemovesLeastRecentlyUsedUntilUnderTheLimit) {
  AddEntry("old", 1000, 3 * 86400);
  AddEntry("mid", 1000, 2 * 86400);
  AddEntry("new", 1000, 1 * 86400);
  EXPECT_EQ(Keys(), (std::vector<std::string>{"new", "mid", "old"}));
  PruneOptions options;
  options.max_bytes = 2500;  // each entry is 1000 bytes plus its record
  options.min_age_seconds = 0;
  Result<PruneResult> pruned = cache_.Prune(options);
  ASSERT_TRUE(pruned.ok());
  ASSERT_EQ(pruned->removed.size(), 2u);
  EXPECT_EQ(pruned->removed[0].record.key, "old");
  EXPECT_EQ(pruned->removed[1].record.key, "mid");
  EXPECT_LE(pruned->bytes_after, 2500);
  EXPECT_EQ(Keys(), std::vector<std::string>{"new"});
}

TEST_F(CacheTest, PruneNeverRemovesEntriesYoungerThanTheMinimumAge) {
  AddEntry("old", 1000, 3 * 86400);
  AddEntry("young1", 1000, 60);
  AddEntry("young2", 1000, 10);
  PruneOptions options;
  options.max_bytes = 0;
  options.min_age_seconds = 3600;
  Result<PruneResult> pruned = cache_.Prune(options);
  ASSERT_TRUE(pruned.ok());
  ASSERT_EQ(pruned->removed.size(), 1u);
  EXPECT_EQ(pruned->removed[0].record.key, "old");
  EXPECT_EQ(pruned->kept_too_young, 2);
  EXPECT_EQ(Keys(), (std::vector<std::string>{"young2", "young1"}));
}

TEST_F(CacheTest, PruneUnderTheLimitOrDryRunRemovesNothing) {
  AddEntry("a", 1000, 3 * 86400);
  AddEntry("b", 1000, 3 * 86400);
  PruneOptions options;
  options.min_age_seconds = 0;
  options.max_bytes = 1 << 20;
  EXPECT_TRUE(cache_.Prune(options)->removed.empty());
  options.max_bytes = 0;
  options.dry_run = true;
  Result<PruneResult> dry = cache_.Prune(options);
  EXPECT_EQ(dry->removed.size(), 2u);
  EXPECT_EQ(Keys().size(), 2u);
  options.dry_run = false;
  EXPECT_EQ(cache_.Prune(options, "a")->removed.size(), 1u);  // "a" is protected
  EXPECT_EQ(Keys(), std::vector<std::string>{"a"});
}

TEST_F(CacheTest, PruneRemovesWorkDirectoriesOfProcessesThatAreGone) {
  Result<fs::path> mine = cache_.NewWorkDir("k");
  ASSERT_TRUE(mine.ok());
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // its pid now belongs to no process
  std::string name = mine->filename().string();
  const size_t pid_start = name.rfind('.', name.rfind('.') - 1) + 1;
  name = name.substr(0, pid_start) + std::to_string(child) + ".0";
  fs::create_directories(mine->parent_path() / name / "half");
  PruneOptions options;
  Result<PruneResult> pruned = cache_.Prune(options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->stale_work_dirs_removed, 1);
  EXPECT_FALSE(fs::exists(mine->parent_path() / name));
  EXPECT_TRUE(fs::exists(*mine));  // this process is alive
}

// Issue 10, finding 8: an entry in use (verify compares it, convert copies it) is locked from
// before it is verified until the user lets go, and prune leaves it alone and says so.
TEST_F(CacheTest, PruneSkipsAndReportsAnEntryHeldByALookup) {
  AddEntry("held", 100, 3 * 24 * 3600);
  AddEntry("free", 100, 3 * 24 * 3600);
  PruneOptions options;
  options.max_bytes = 0;
  options.min_age_seconds = 0;
  {
    Result<CacheLookup> lookup = cache_.Lookup("held");
    ASSERT_TRUE(lookup.ok());
    ASSERT_EQ(lookup->state, LookupState::kHit);
    ASSERT_NE(lookup->lock, nullptr);
    for (bool dry_run : {true, false}) {
      options.dry_run = dry_run;
      Result<PruneResult> pruned = cache_.Prune(options);
      ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
      ASSERT_EQ(pruned->in_use.size(), 1u);
      EXPECT_EQ(pruned->in_use[0].record.key, "held");
      ASSERT_EQ(pruned->removed.size(), 1u);
      EXPECT_EQ(pruned->removed[0].record.key, "free");
    }
    EXPECT_EQ(Keys(), std::vector<std::string>{"held"});
    EXPECT_TRUE(fs::exists(lookup->model_path));
  }
  options.dry_run = false;
  Result<PruneResult> pruned = cache_.Prune(options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_TRUE(pruned->in_use.empty());
  EXPECT_EQ(pruned->removed.size(), 1u);
  EXPECT_TRUE(Keys().empty());
}

TEST_F(CacheTest, AnotherProcessHoldingAnEntryKeepsItFromPrune) {
  AddEntry("k1", 100, 3 * 24 * 3600);
  int ready[2], release[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {
    Result<CacheLookup> lookup = cache_.Lookup("k1");
    const char ok = lookup.ok() && lookup->state == LookupState::kHit ? 'y' : 'n';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(1);
    char byte = 0;
    ::_exit(::read(release[0], &byte, 1) == 1 ? 0 : 1);  // holds the lock until told
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  PruneOptions options;
  options.max_bytes = 0;
  options.min_age_seconds = 0;
  Result<PruneResult> pruned = cache_.Prune(options);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned->in_use.size(), 1u);
  EXPECT_TRUE(pruned->removed.empty());
  EXPECT_TRUE(fs::exists(cache_.EntriesDir() / "k1" / "model.onnx"));
  ASSERT_EQ(::write(release[1], "x", 1), 1);
  int status = 0;
  ::waitpid(holder, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(cache_.Prune(options)->removed.size(), 1u);
  for (int fd : {ready[0], ready[1], release[0], release[1]}) ::close(fd);
}

// True once /proc/locks lists a process blocked on a lock of inode `inode` ("-> FLOCK ...
// <major>:<minor>:<inode> ..."); false after about a minute without one.
bool WaitForBlockedLock(ino_t inode) {
  const std::string suffix = ":" + std::to_string(inode) + " ";
  for (int poll_idx = 0; poll_idx < 6000; ++poll_idx) {
    std::ifstream locks("/proc/locks");
    for (std::string line; std::getline(locks, line);) {
      if (line.find("->") != std::string::npos && line.find(suffix) != std::string::npos) {
        return true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_F(CacheTest, ALookupThatWaitedForAPruneFindsNothing) {
  AddEntry("k1", 10, 0);
  const fs::path entry = cache_.EntriesDir() / "k1";
  // A prune in progress: it holds the entry exclusively while it renames it away.
  const int fd = ::open(entry.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  struct stat held {};
  ASSERT_EQ(::fstat(fd, &held), 0);
  Result<CacheLookup> lookup = Status::Internal("not run");
  std::thread reader([&] { lookup = cache_.Lookup("k1"); });
  // The entry goes only once the reader waits for its lock (the kernel lists it as blocked), so
  // the reader is granted a lock on a folder that has been renamed away.
  ASSERT_TRUE(WaitForBlockedLock(held.st_ino)) << "the lookup never waited for the entry's lock";
  fs::rename(entry, cache_.EntriesDir() / ".tmp" / "gone");
  ::close(fd);
  reader.join();
  ASSERT_TRUE(lookup.ok()) << lookup.status().ToString();
  EXPECT_EQ(lookup->state, LookupState::kMiss);
}

// Issue 10, finding 5: copying a converted model to -o in a shared folder never writes through a
// symlink planted at the temporary name, nor through one at -o itself.
TEST(CopyFileAtomicTest, NeverWritesThroughAPlantedSymlink) {
  testing::ScopedTempDir dir;
  const fs::path victim = dir.path() / "victim";
  ASSERT_TRUE(WriteFileAtomic(victim, "precious").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "model.onnx", "converted").ok());
  const fs::path out = dir.path() / "shared" / "out.onnx";
  fs::create_directories(out.parent_path());
  const fs::path planted = out.string() + ".tmp-" + std::to_string(::getpid());
  fs::create_symlink(victim, planted);
  ASSERT_TRUE(CopyFileAtomic(dir.path() / "model.onnx", out).ok());
  EXPECT_EQ(*ReadFile(victim), "precious");
  EXPECT_EQ(*ReadFile(out), "converted");
  EXPECT_TRUE(fs::is_symlink(planted));
  fs::remove(out);
  fs::create_symlink(victim, out);
  ASSERT_TRUE(CopyFileAtomic(dir.path() / "model.onnx", out).ok());
  EXPECT_EQ(*ReadFile(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(out));
}

TEST(CacheConfigTest, ThresholdsComeFromTheEnvironmentOrTheReferenceVariables) {
  ScopedEnv max_bytes("CONVGATE_CACHE_MAX_BYTES", nullptr);
  ScopedEnv min_age("CONVGATE_CACHE_MIN_AGE_SECONDS", nullptr);
  ScopedEnv threshold("CACHE_CLEANUP_THRESHOLD", "50");
  ScopedEnv days("CACHE_CLEANUP_MIN_AGE_DAYS", "14");
  Result<PruneOptions> reference = PruneOptionsFromEnv();
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->max_bytes, int64_t{50} * 1000 * 1000 * 1000);
  EXPECT_EQ(reference->min_age_seconds, 14 * 86400);
  ScopedEnv ours_bytes("CONVGATE_CACHE_MAX_BYTES", "10M");
  ScopedEnv ours_age("CONVGATE_CACHE_MIN_AGE_SECONDS", "90m");
  Result<PruneOptions> ours = PruneOptionsFromEnv();
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->max_bytes, 10 << 20);
  EXPECT_EQ(ours->min_age_seconds, 5400);
}

TEST(CacheConfigTest, DefaultsAndBadValues) {
  ScopedEnv max_bytes("CONVGATE_CACHE_MAX_BYTES", nullptr);
  ScopedEnv min_age("CONVGATE_CACHE_MIN_AGE_SECONDS", nullptr);
  ScopedEnv threshold("CACHE_CLEANUP_THRESHOLD", nullptr);
  ScopedEnv days("CACHE_CLEANUP_MIN_AGE_DAYS", nullptr);
  Result<PruneOptions> defaults = PruneOptionsFromEnv();
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->max_bytes, int64_t{10} << 30);
  EXPECT_EQ(defaults->min_age_seconds, 86400);
  ScopedEnv bad("CONVGATE_CACHE_MAX_BYTES", "lots");
  Result<PruneOptions> rejected = PruneOptionsFromEnv();
  EXPECT_EQ(rejected.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rejected.status().message().find("CONVGATE_CACHE_MAX_BYTES: size 'lots'"),
            std::string::npos)
      << rejected.status().message();
}

TEST(CacheConfigTest, TheCacheDirectoryFollowsTheEnvironment) {
  ScopedEnv dir("CONVGATE_CACHE_DIR", "/some/where");
  EXPECT_EQ(*DefaultCacheDir(), fs::path("/some/where"));
  ScopedEnv unset("CONVGATE_CACHE_DIR", nullptr);
  ScopedEnv home("HOME", "/home/u");
  EXPECT_EQ(*DefaultCacheDir(), fs::path("/home/u/.cache/convgate"));
}

TEST(CacheKeyTest, EveryFieldChangesTheKey) {
  KeyMaterial base;
  base.source_digest = "s";
  base.kind = "fp16";
  base.tool = "t";
  base.tool_version = "1";
  base.params = {{"clamp", "1"}};
  base.output_extension = ".onnx";
  const std::string key = CacheKey(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(CacheKey(base), key);
  std::vector<KeyMaterial> variants(6, base);
  variants[0].source_digest = "s2";
  variants[1].kind = "opset:17";
  variants[2].tool_version = "2";
  variants[3].converter_identity = "argv x";
  variants[4].params["clamp"] = "0";
  variants[5].output_extension = ".tflite";
  for (const KeyMaterial& variant : variants) EXPECT_NE(CacheKey(variant), key);
}

TEST(CacheKeyTest, ADirectorySourceIsDigestedByItsFiles) {
  testing::ScopedTempDir dir;
  fs::create_directories(dir.path() / "m" / "sub");
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "m" / "a.bin", "a").ok());
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "m" / "sub" / "b.bin", "b").ok());
  Result<std::string> first = DigestSource(dir.path() / "m");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*DigestSource(dir.path() / "m"), *first);
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "m" / "sub" / "b.bin", "B").ok());
  EXPECT_NE(*DigestSource(dir.path() / "m"), *first);
  EXPECT_EQ(DigestSource(dir.path() / "missing").status().code(), StatusCode::kNotFound);
}

// A model's weights in a data file are part of what was converted: the same graph with other
// weights is another source, and a location outside the model's folder is never read.
TEST(CacheKeyTest, AnOnnxModelIsDigestedWithItsExternalData) {
  testing::ScopedTempDir dir;
  onnx::ModelProto model = testing::ParseOnnxText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,2] x) => (float[1,2] y) { y = MatMul(x, w) }
  )");
  onnx::TensorProto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w->add_external_data();
  location->set_key("location");
  location->set_value("w.bin");
  const fs::path path = dir.path() / "model.onnx";
  testing::WriteModel(model, path);
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "w.bin", std::string(16, '\1')).ok());
  Result<std::string> first = DigestSource(path);
  ASSERT_TRUE(first.ok());
  EXPECT_NE(*first, Sha256File(path).value());
  ASSERT_TRUE(WriteFileAtomic(dir.path() / "w.bin", std::string(16, '\2')).ok());
  EXPECT_NE(*DigestSource(path), *first);
  location->set_value("/dev/zero");  // would never end if read
  testing::WriteModel(model, path);
  EXPECT_TRUE(DigestSource(path).ok());
}

TEST(RetryTest, OnlyFailuresThatLookTransientAreRetried) {
  SubprocessResult run;
  run.exit_code = 1;
  EXPECT_FALSE(IsTransientFailure(run));
  run.stderr_tail = "error: Connection reset by peer\n";
  EXPECT_TRUE(IsTransientFailure(run));
  run.stderr_tail = "resource temporarily unavailable";
  EXPECT_TRUE(IsTransientFailure(run));
  run.stderr_tail = "";
  run.exit_code = kExitTempFail;
  EXPECT_TRUE(IsTransientFailure(run));
  run.exit_code = -1;
  run.signal = SIGKILL;  // the OOM killer, a shutdown
  EXPECT_TRUE(IsTransientFailure(run));
  run.signal = SIGSEGV;  // its own crash: it will crash again
  EXPECT_FALSE(IsTransientFailure(run));
  run.signal = SIGTERM;
  run.timed_out = true;
  EXPECT_TRUE(IsTransientFailure(run));
  SubprocessResult ok;
  ok.exit_code = 0;
  ok.stderr_tail = "connection established";
  EXPECT_FALSE(IsTransientFailure(ok));
}

TEST(RetryTest, BackoffDoublesAndIsCapped) {
  EXPECT_DOUBLE_EQ(BackoffSeconds(0.5, 1), 0.5);
  EXPECT_DOUBLE_EQ(BackoffSeconds(0.5, 2), 1.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(0.5, 3), 2.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(0.5, 30), 60.0);
  EXPECT_DOUBLE_EQ(BackoffSeconds(0.0, 3), 0.0);
}

}  // namespace
}  // namespace convgate::convert
