#include "convgate/core/file_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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

}  // namespace
}  // namespace convgate
