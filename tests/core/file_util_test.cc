#include "convgate/core/file_util.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "convgate/core/limits.h"

namespace convgate {
namespace {

std::filesystem::path TempDir() {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("convgate_file_util_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(FileUtil, AtomicWriteThenRead) {
  std::filesystem::path path = TempDir() / "a.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "hello").ok());
  EXPECT_EQ(*ReadFile(path), "hello");
  ASSERT_TRUE(WriteFileAtomic(path, "again").ok());
  EXPECT_EQ(*ReadFile(path), "again");
  // No temporary file is left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(path.parent_path());
}

TEST(FileUtil, MissingFileIsNotFoundAndNamed) {
  Result<std::string> contents = ReadFile("/nonexistent/convgate/x.npy");
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), StatusCode::kNotFound);
  EXPECT_NE(contents.status().message().find("/nonexistent/convgate/x.npy"), std::string::npos);
}

TEST(FileUtil, Sha256MatchesKnownDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::path path = TempDir() / "abc.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "abc").ok());
  EXPECT_EQ(*Sha256File(path), Sha256Hex("abc"));
  std::filesystem::remove_all(path.parent_path());
}

// Large files' digests are remembered per process (a verify hashes its source several times);
// any change to the file must still give its new digest: a rewrite in place of the same size
// right after the first hash (inside one tick of the file clock), one long after, and a file
// replaced by rename. A prefetch's digest is the file's.
TEST(FileUtil, RememberedDigestsFollowEveryChange) {
  const std::filesystem::path dir = TempDir();
  const std::filesystem::path path = dir / "big.bin";
  std::string bytes(3 << 20, 'a');
  auto rewrite_in_place = [&](char fill) {
    std::fill(bytes.begin(), bytes.end(), fill);
    FILE* file = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
    std::fclose(file);
  };
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  rewrite_in_place('b');  // at once: the same mtime tick, possibly
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  ::usleep(200'000);  // long past the tick: the next digest is remembered
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  rewrite_in_place('c');
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  std::fill(bytes.begin(), bytes.end(), 'd');
  ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
  ::usleep(200'000);
  PrefetchSha256(path);
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  PrefetchSha256(path);  // known already: nothing to do
  EXPECT_EQ(*Sha256File(path), Sha256Hex(bytes));
  PrefetchSha256(dir / "missing.bin");  // nothing to hash, nothing to say
  std::filesystem::remove_all(dir);
}

// Issue 10: a FIFO given as a model or data file hung every reader (open waits for a writer), and
// /dev/zero or /dev/urandom grew memory without bound. Readers take regular files only.
TEST(FileUtil, FifoIsRefusedWithoutBlocking) {
  const std::filesystem::path dir = TempDir();
  const std::filesystem::path fifo = dir / "model.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> contents = ReadFile(fifo);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(contents.status().message(), fifo.string() + " is a FIFO, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(FileUtil, DevicesAndLinksToThemAreRefused) {
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    Result<std::string> contents = ReadFile(device);
    ASSERT_FALSE(contents.ok()) << device;
    EXPECT_EQ(contents.status().message(),
              std::string(device) + " is a character device, not a regular file");
  }
  const std::filesystem::path dir = TempDir();
  const std::filesystem::path link = dir / "weights.npz";
  std::filesystem::create_symlink("/dev/zero", link);
  Status status = CheckRegularFile(link);
  EXPECT_EQ(status.message(),
            link.string() + " (a link to /dev/zero) is a character device, not a regular file");
  EXPECT_EQ(ReadFile(dir).status().message(), dir.string() + " is a folder, not a regular file");
  std::filesystem::remove_all(dir);
}

TEST(FileUtil, SizeIsCheckedBeforeReading) {
  const std::filesystem::path dir = TempDir();
  const std::filesystem::path path = dir / "report.json";
  ASSERT_TRUE(WriteFileAtomic(path, "0123456789").ok());
  Result<std::string> contents = ReadFile(path, 5, "a test's limit");
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(contents.status().message(),
            path.string() + " is 10 B, over the limit of 5 B (a test's limit)");
  EXPECT_EQ(*ReadFile(path, 10, "a test's limit"), "0123456789");
  // A regular file may also be read piece by piece, and says when it ends early.
  Result<InputFile> file = InputFile::Open(path, 10, "");
  ASSERT_TRUE(file.ok());
  std::string head(4, '\0');
  ASSERT_TRUE(file->ReadExactly(std::as_writable_bytes(std::span(head))).ok());
  EXPECT_EQ(head, "0123");
  std::string rest(7, '\0');
  EXPECT_EQ(file->ReadExactly(std::as_writable_bytes(std::span(rest))).code(),
            StatusCode::kDataLoss);
  std::filesystem::remove_all(dir);
}

// /proc files are regular but report size 0: they are read to their end all the same.
TEST(FileUtil, FilesWithoutASizeAreReadToTheirEnd) {
  Result<std::string> status = ReadFile("/proc/self/status", kMaxTextFileBytes, "");
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_NE(status->find("VmRSS"), std::string::npos);
}

TEST(Limits, DefaultsDeriveFromUsableMemory) {
  const int64_t usable = UsableMemoryBytes();
  ASSERT_GT(usable, 0) << "Linux reports its physical memory";
  EXPECT_EQ(DefaultSizeLimit(), std::max<int64_t>(usable / 2, int64_t{64} << 20));
  const Limits limits;
  EXPECT_EQ(limits.max_tensor_bytes, DefaultSizeLimit());
  EXPECT_EQ(limits.max_run_bytes, DefaultSizeLimit());
  EXPECT_EQ(limits.run_timeout_seconds, 600.0);
}

// UsableCores follows the affinity mask (what Slurm or taskset gives a process), not the machine.
TEST(Limits, UsableCoresAreTheAffinityMasks) {
  cpu_set_t saved;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_EQ(UsableCores(), CPU_COUNT(&saved));
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(UsableCores(), 1);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(saved), &saved), 0);
}

}  // namespace
}  // namespace convgate

namespace convgate {
namespace {

namespace fs = std::filesystem;

// Issue 10, finding 5: someone who can write to a shared --out folder plants a symlink where the
// writer's temporary file will be ("<path>.tmp-<pid>" is easy to guess). The writer must never
// write through it.
class PlantedSymlinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convgate_planted_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
    victim_ = dir_ / "victim";
    ASSERT_TRUE(WriteFileAtomic(victim_, "precious").ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Plants "<target>.tmp-<this pid>" -> `to`.
  void Plant(const fs::path& target, const fs::path& to) {
    fs::create_symlink(to, target.string() + ".tmp-" + std::to_string(::getpid()));
  }

  fs::path dir_;
  fs::path victim_;
};

TEST_F(PlantedSymlinkTest, AtomicWritesNeverWriteThroughAPlantedTemporaryName) {
  const fs::path report = dir_ / "out" / "report.json";
  Plant(report, victim_);
  ASSERT_TRUE(WriteFileAtomic(report, "{}").ok());
  EXPECT_EQ(*ReadFile(victim_), "precious");
  EXPECT_EQ(*ReadFile(report), "{}");
  EXPECT_FALSE(fs::is_symlink(report));
  // The planted link is someone else's: left as it was, and no temporary file of ours remains.
  EXPECT_TRUE(fs::is_symlink(report.string() + ".tmp-" + std::to_string(::getpid())));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "out"), fs::directory_iterator()), 2);
}

TEST_F(PlantedSymlinkTest, ADanglingPlantedLinkCreatesNothingAtItsTarget) {
  const fs::path report = dir_ / "out" / "junit.xml";
  const fs::path would_be_created = dir_ / "created-by-symlink";
  Plant(report, would_be_created);
  ASSERT_TRUE(WriteFileAtomic(report, "<x/>").ok());
  EXPECT_FALSE(fs::exists(would_be_created));
  EXPECT_EQ(*ReadFile(report), "<x/>");
}

TEST_F(PlantedSymlinkTest, ASymlinkAtTheTargetItselfIsReplacedNotFollowed) {
  const fs::path report = dir_ / "out" / "verify_result.json";
  fs::create_symlink(victim_, report);
  ASSERT_TRUE(WriteFileAtomic(report, "{}").ok());
  EXPECT_EQ(*ReadFile(victim_), "precious");
  EXPECT_FALSE(fs::is_symlink(report));
  EXPECT_EQ(*ReadFile(report), "{}");
}

TEST_F(PlantedSymlinkTest, APendingFileThatIsNotCommittedLeavesNothing) {
  const fs::path target = dir_ / "out" / "model.onnx";
  {
    Result<PendingFile> pending = PendingFile::Create(target);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    ASSERT_TRUE(pending->Write("half").ok());
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "out"));
  Result<PendingFile> missing = PendingFile::Create(dir_ / "no-such-folder" / "x");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace convgate
