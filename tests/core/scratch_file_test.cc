// Scratch files: a copy of a file followed by more bytes, never written through a planted name.
#include "convgate/core/scratch_file.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"

namespace convgate {
namespace {

TEST(WriteScratchFile, CopiesTheFileThenAppendsTheContents) {
  Result<TempDir> dir = TempDir::Create("scratch-test");
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path original = dir->path() / "model.onnx";
  std::string big(3 << 20, '\0');  // over any single sendfile chunk a kernel might stop at
  for (size_t idx = 0; idx < big.size(); ++idx) big[idx] = static_cast<char>(idx * 7 % 251);
  ASSERT_TRUE(WriteFileAtomic(original, big).ok());
  const std::filesystem::path scratch = dir->path() / "marked.onnx";
  ASSERT_TRUE(WriteScratchFile(scratch, "tail", original).ok());
  EXPECT_EQ(*ReadFile(scratch), big + "tail");
  const std::filesystem::path plain = dir->path() / "plain.onnx";
  ASSERT_TRUE(WriteScratchFile(plain, "only this").ok());
  EXPECT_EQ(*ReadFile(plain), "only this");
}

TEST(WriteScratchFile, RefusesAnExistingNameAndAMissingOriginal) {
  Result<TempDir> dir = TempDir::Create("scratch-test");
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path taken = dir->path() / "taken";
  ASSERT_TRUE(WriteFileAtomic(taken, "planted").ok());
  Status exists = WriteScratchFile(taken, "new");
  EXPECT_EQ(exists.code(), StatusCode::kUnavailable);
  EXPECT_NE(exists.message().find(taken.string()), std::string::npos);
  EXPECT_EQ(*ReadFile(taken), "planted");  // not written through
  const std::filesystem::path missing = dir->path() / "missing.onnx";
  Status no_original = WriteScratchFile(dir->path() / "copy", "x", missing);
  EXPECT_EQ(no_original.code(), StatusCode::kUnavailable);
  EXPECT_NE(no_original.message().find(missing.string()), std::string::npos);
}

TEST(LinkScratchFile, LinksTheSameFileAndNamesBothPathsWhenItCannot) {
  Result<TempDir> dir = TempDir::Create("scratch-test");
  ASSERT_TRUE(dir.ok());
  const std::filesystem::path original = dir->path() / "model.onnx";
  ASSERT_TRUE(WriteFileAtomic(original, "weights").ok());
  const std::filesystem::path linked = dir->path() / "linked.onnx";
  ASSERT_TRUE(LinkScratchFile(linked, original).ok());
  EXPECT_TRUE(std::filesystem::equivalent(linked, original));
  Status taken = LinkScratchFile(linked, original);
  EXPECT_EQ(taken.code(), StatusCode::kUnavailable);
  const std::filesystem::path missing = dir->path() / "missing.onnx";
  Status no_original = LinkScratchFile(dir->path() / "other.onnx", missing);
  EXPECT_EQ(no_original.code(), StatusCode::kUnavailable);
  EXPECT_NE(no_original.message().find(missing.string()), std::string::npos);
  EXPECT_NE(no_original.message().find("other.onnx"), std::string::npos);
}

}  // namespace
}  // namespace convgate
