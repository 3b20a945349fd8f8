#include "convgate/io/npz.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "io/io_test_util.h"

namespace convgate::io {
namespace {

using testing::PatternTensor;
using testing::TempDir;
using testing::ZipMember;

TensorMap EveryDTypeMap() {
  TensorMap tensors;
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes) {
    const std::string name = "t_" + std::string(DTypeName(dtype));
    EXPECT_TRUE(tensors.Insert(name, PatternTensor(dtype, Shape::Of({2, 3}), seed++)).ok());
  }
  EXPECT_TRUE(tensors.Insert("scope/layer.1/out:0", PatternTensor(DType::kFloat32, Shape())).ok());
  EXPECT_TRUE(tensors.Insert("empty", PatternTensor(DType::kInt64, Shape::Of({0, 4}))).ok());
  return tensors;
}

void ExpectSameMaps(const TensorMap& actual, const TensorMap& expected) {
  ASSERT_EQ(actual.Names(), expected.Names());
  for (const TensorMap::Entry& entry : expected) {
    const Tensor* tensor = actual.Find(entry.name);
    ASSERT_NE(tensor, nullptr) << entry.name;
    EXPECT_TRUE(tensor->BitwiseEquals(entry.tensor)) << entry.name;
  }
}

TEST(Npz, RoundTripsStoredAndDeflatedInOrder) {
  TempDir dir;
  const TensorMap tensors = EveryDTypeMap();
  for (bool compress : {false, true}) {
    const std::filesystem::path path = dir / (compress ? "deflated.npz" : "stored.npz");
    ASSERT_TRUE(WriteNpz(path, tensors, {.compress = compress}).ok());
    Result<TensorMap> back = ReadNpz(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ExpectSameMaps(*back, tensors);
    // The in-memory reader sees the same archive.
    Result<TensorMap> parsed = ParseNpz(testing::ReadAll(path), "memory");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    ExpectSameMaps(*parsed, tensors);
  }
  // Zeros compress well; the deflated archive must actually be deflated.
  TensorMap zeros;
  ASSERT_TRUE(zeros.Insert("z", Tensor::Allocate(DType::kFloat32, Shape::Of({4096})).value()).ok());
  ASSERT_TRUE(WriteNpz(dir / "z.npz", zeros, {.compress = true}).ok());
  EXPECT_LT(std::filesystem::file_size(dir / "z.npz"), 4096u);
}

TEST(Npz, WritesTheSameBytesForTheSameTensors) {
  TempDir dir;
  const TensorMap tensors = EveryDTypeMap();
  ASSERT_TRUE(WriteNpz(dir / "a.npz", tensors).ok());
  ASSERT_TRUE(WriteNpz(dir / "b.npz", tensors).ok());
  EXPECT_EQ(testing::ReadAll(dir / "a.npz"), testing::ReadAll(dir / "b.npz"));
}

TEST(Npz, EmptyMapWritesAnEmptyArchive) {
  TempDir dir;
  ASSERT_TRUE(WriteNpz(dir / "none.npz", TensorMap()).ok());
  EXPECT_EQ(std::filesystem::file_size(dir / "none.npz"), 22u);
  Result<TensorMap> back = ReadNpz(dir / "none.npz");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->empty());
}

TEST(Npz, WriteReplacesAtomicallyAndLeavesNoTemporaryFiles) {
  TempDir dir;
  TensorMap first;
  ASSERT_TRUE(first.Insert("a", PatternTensor(DType::kInt8, Shape::Of({3}))).ok());
  ASSERT_TRUE(WriteNpz(dir / "x.npz", first).ok());
  TensorMap second;
  ASSERT_TRUE(second.Insert("b", PatternTensor(DType::kUInt8, Shape::Of({5}))).ok());
  ASSERT_TRUE(WriteNpz(dir / "x.npz", second).ok());
  Result<TensorMap> back = ReadNpz(dir / "x.npz");
  ASSERT_TRUE(back.ok());
  ExpectSameMaps(*back, second);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "x.npz");
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(Npz, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  TensorMap tensors;
  ASSERT_TRUE(tensors.Insert("a", PatternTensor(DType::kInt8, Shape::Of({3}))).ok());
  // Into a folder that does not exist: nothing is written anywhere.
  Status missing = WriteNpz(dir / "no" / "such" / "x.npz", tensors);
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("x.npz"), std::string::npos) << missing.ToString();
  // Over a non-empty directory: the rename fails and the directory stays as it was.
  std::filesystem::create_directories(dir / "busy.npz" / "keep");
  Status busy = WriteNpz(dir / "busy.npz", tensors);
  EXPECT_FALSE(busy.ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir / "busy.npz" / "keep"));
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1) << "a temporary file was left behind";
}

TEST(Npz, ReadsHandWrittenArchives) {
  const std::string npy = SerializeNpy(PatternTensor(DType::kInt32, Shape::Of({2}))).value();
  // Directory entries are skipped; names keep their '/' and ':'.
  Result<TensorMap> tensors =
      ParseNpz(testing::MakeZip({{"dir/", ""}, {"dir/a:0.npy", npy}, {"b.npy", npy}}), "hand.npz");
  ASSERT_TRUE(tensors.ok()) << tensors.status().ToString();
  EXPECT_EQ(tensors->Names(), (std::vector<std::string>{"dir/a:0", "b"}));
}

struct BadNpz {
  std::string label;
  std::string bytes;
  StatusCode code;
  std::string problem;
};

std::vector<BadNpz> BadNpzCases() {
  const std::string npy = SerializeNpy(PatternTensor(DType::kFloat32, Shape::Of({4}))).value();
  std::string stored;
  {
    TempDir dir;
    TensorMap tensors;
    EXPECT_TRUE(tensors.Insert("x", PatternTensor(DType::kFloat32, Shape::Of({64}))).ok());
    EXPECT_TRUE(WriteNpz(dir / "good.npz", tensors).ok());
    stored = testing::ReadAll(dir / "good.npz");
  }
  std::string flipped = stored;
  flipped[stored.size() / 2] ^= 0x55;  // inside x.npy's data: the CRC no longer matches
  const std::string bad_header =
      testing::MakeZip({{"x.npy", std::string("\x93NUMPY\x01\x00\x02\x00{}", 12)}});
  return {
      {"empty file", "", StatusCode::kDataLoss, "empty file"},
      {"not a zip", "this is not a zip archive at all, just text", StatusCode::kDataLoss,
       "Not a zip archive"},
      {"a bare npy", npy, StatusCode::kDataLoss, "Not a zip archive"},
      {"truncated archive", stored.substr(0, stored.size() - 30), StatusCode::kDataLoss,
       "not a valid .npz"},
      {"corrupt member", flipped, StatusCode::kDataLoss, "entry 'x.npy': CRC error"},
      {"member not npy", bad_header, StatusCode::kDataLoss, "entry 'x.npy': header"},
      {"member truncated npy", testing::MakeZip({{"x.npy", npy.substr(0, npy.size() - 1)}}),
       StatusCode::kDataLoss, "(truncated)"},
      {"not a .npy name", testing::MakeZip({{"x.txt", npy}}), StatusCode::kDataLoss,
       "entry 'x.txt': not a .npy member"},
      {"duplicate member", testing::MakeZip({{"x.npy", npy}, {"x.npy", npy}}),
       StatusCode::kDataLoss, "same name"},
      {"unknown method", testing::MakeZip({ZipMember{"x.npy", npy, 77}}),
       StatusCode::kUnimplemented, "Compression method not supported"},
      // Found by fuzz/npz_fuzz.cc: sizes forged in the headers once made the reader allocate them.
      {"forged sizes", testing::MakeZip({ZipMember{"x.npy", npy, 8, 0, 0xF0000000u}}),
       StatusCode::kDataLoss, "compressed bytes in a"},
      {"forged size, odd method",
       testing::MakeZip({ZipMember{"x.npy", npy, 512, 0, 0x8E000000u, 0}}), StatusCode::kDataLoss,
       "unexpected end of data"},
      {"forged deflate ratio",
       testing::MakeZip(
           {ZipMember{"x.npy", npy, 8, 0, 0x8E000000u, static_cast<uint32_t>(npy.size())}}),
       StatusCode::kDataLoss, "claims 2382364672 bytes from"},
      {"deflate method, stored data", testing::MakeZip({ZipMember{"x.npy", npy, 8}}),
       StatusCode::kDataLoss, "entry 'x.npy'"},
      {"encrypted", testing::MakeZip({ZipMember{"x.npy", npy, 0, 1}}), StatusCode::kUnimplemented,
       "entry 'x.npy'"},
  };
}

TEST(Npz, EveryMalformedArchiveIsRejectedWithTheFileNamed) {
  TempDir dir;
  for (const BadNpz& bad : BadNpzCases()) {
    const std::filesystem::path path = dir / "bad.npz";
    testing::WriteAll(path, bad.bytes);
    for (bool from_memory : {false, true}) {
      Result<TensorMap> tensors = from_memory ? ParseNpz(bad.bytes, path.string()) : ReadNpz(path);
      const std::string label = bad.label + (from_memory ? " (memory)" : " (file)");
      ASSERT_FALSE(tensors.ok()) << label;
      const Status& status = tensors.status();
      EXPECT_EQ(status.code(), bad.code) << label << ": " << status.ToString();
      EXPECT_NE(status.message().find(path.string()), std::string::npos)
          << label << ": " << status.ToString();
      EXPECT_NE(status.message().find(bad.problem), std::string::npos)
          << label << ": " << status.ToString();
    }
  }
}

TEST(Npz, MissingFileIsNotFoundAndDirectoryIsInvalid) {
  Result<TensorMap> missing = ReadNpz("/nonexistent/convgate/x.npz");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/convgate/x.npz"), std::string::npos);
  TempDir dir;
  EXPECT_EQ(ReadNpz(dir.path()).status().code(), StatusCode::kInvalidArgument);
}

TEST(Npz, EveryTruncationFailsCleanly) {
  TempDir dir;
  TensorMap tensors;
  ASSERT_TRUE(tensors.Insert("x", PatternTensor(DType::kInt16, Shape::Of({5}))).ok());
  ASSERT_TRUE(tensors.Insert("y", PatternTensor(DType::kBool, Shape::Of({3}))).ok());
  for (bool compress : {false, true}) {
    ASSERT_TRUE(WriteNpz(dir / "t.npz", tensors, {.compress = compress}).ok());
    const std::string archive = testing::ReadAll(dir / "t.npz");
    for (size_t length = 0; length < archive.size(); ++length) {
      Result<TensorMap> parsed = ParseNpz(archive.substr(0, length), "prefix");
      ASSERT_FALSE(parsed.ok()) << length;
      EXPECT_NE(parsed.status().message().find("prefix"), std::string::npos);
    }
  }
}

// Issue 10, finding 5: a symlink planted at the name the writer's temporary file used to have
// ("<path>.tmp-<pid>") is never written through, for every archive (the empty one is written
// by hand, the others by libzip).
TEST(Npz, NeverWritesThroughASymlinkPlantedAtTheTemporaryName) {
  TempDir dir;
  const std::filesystem::path victim = dir / "victim";
  ASSERT_TRUE(WriteFileAtomic(victim, "precious").ok());
  for (const TensorMap& tensors : {EveryDTypeMap(), TensorMap()}) {
    const std::filesystem::path path = dir / (tensors.empty() ? "empty.npz" : "inputs.npz");
    const std::filesystem::path planted = path.string() + ".tmp-" + std::to_string(::getpid());
    std::filesystem::create_symlink(victim, planted);
    ASSERT_TRUE(WriteNpz(path, tensors).ok());
    EXPECT_EQ(testing::ReadAll(victim), "precious");
    EXPECT_TRUE(std::filesystem::is_symlink(planted));
    Result<TensorMap> back = ReadNpz(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ExpectSameMaps(*back, tensors);
  }
}

}  // namespace
}  // namespace convgate::io
