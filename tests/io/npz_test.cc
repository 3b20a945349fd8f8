#include "convgate/io/npz.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/limits.h"
#include "convgate/io/npy.h"
#include "io/io_test_util.h"
#include "testing/hostile_files.h"

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
    // Stored members (np.savez's default) are read where they lie: the tensor's bytes are the
    // file's, mapped, not a copy (strings are decoded). Deflated members are inflated.
    for (const TensorMap::Entry& entry : *back) {
      if (entry.tensor.dtype() == DType::kString || entry.tensor.byte_size() == 0) continue;
      EXPECT_EQ(testing::InMappingOf(entry.tensor.bytes().data(), path), !compress)
          << path << " '" << entry.name << "'";
    }
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

// A tensor read in place may be written (a caller normalising data): the mapping is private, so
// the file does not change.
TEST(Npz, WritingATensorReadInPlaceLeavesTheFileAlone) {
  TempDir dir;
  TensorMap tensors;
  ASSERT_TRUE(tensors.Insert("x", PatternTensor(DType::kFloat32, Shape::Of({4096}))).ok());
  ASSERT_TRUE(WriteNpz(dir / "x.npz", tensors).ok());
  const std::string before = testing::ReadAll(dir / "x.npz");
  {
    TensorMap back = ReadNpz(dir / "x.npz").value();
    Tensor* x = back.Find("x");
    ASSERT_TRUE(testing::InMappingOf(x->bytes().data(), dir / "x.npz"));
    for (int64_t idx = 0; idx < x->num_elements(); ++idx) x->SetDouble(idx, -1.0);
    EXPECT_EQ(x->GetDouble(4095), -1.0);
  }
  EXPECT_EQ(testing::ReadAll(dir / "x.npz"), before);
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

TEST(Npz, MissingFileIsNotFoundAndFolderIsRefused) {
  Result<TensorMap> missing = ReadNpz("/nonexistent/convgate/x.npz");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/convgate/x.npz"), std::string::npos);
  TempDir dir;
  EXPECT_EQ(ReadNpz(dir.path()).status().code(), StatusCode::kFailedPrecondition);
}

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

// Limits with only the one under test below the archive; the other out of the way.
Limits TensorLimit(int64_t max_tensor_bytes) {
  Limits limits;
  limits.max_tensor_bytes = max_tensor_bytes;
  limits.max_run_bytes = int64_t{1} << 50;
  return limits;
}

// Issue 10: a 5 MB file holding 5 GiB of deflated zeros drove RSS to 10.4 GB (the member read
// whole, then copied into its tensor). Its declared size is refused before anything is inflated.
TEST(Npz, ZipBombIsRefusedByItsDeclaredSize) {
  TempDir dir;
  const std::filesystem::path path = dir / "bomb.npz";
  const std::string bomb = convgate::testing::ZeroBombNpz("x", static_cast<uint64_t>(5 * kGiB / 4));
  EXPECT_LT(bomb.size(), static_cast<size_t>(6 * kMiB));
  testing::WriteAll(path, bomb);
  // Both limits alike, as by default: the member is named, not the archive's total.
  Limits limits;
  limits.max_tensor_bytes = limits.max_run_bytes = kGiB;
  Result<TensorMap> tensors = ReadNpz(path, limits);
  ASSERT_FALSE(tensors.ok());
  EXPECT_EQ(tensors.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(tensors.status().message(),
            path.string() +
                " entry 'x.npy': declares 5.0 GiB uncompressed, over the limit of 1.0 GiB "
                "(--max-tensor-bytes)");
}

// A member's declared size leaves room for a large .npy header; the header's own shape is held
// to the limit before the data is inflated.
TEST(Npz, AMemberWhoseHeaderDeclaresTooMuchIsRefused) {
  TempDir dir;
  const std::filesystem::path path = dir / "bomb.npz";
  testing::WriteAll(path, convgate::testing::ZeroBombNpz("x", 3 * kMiB / 4));
  Result<TensorMap> tensors = ReadNpz(path, TensorLimit(5 * kMiB / 2));
  ASSERT_FALSE(tensors.ok());
  EXPECT_EQ(tensors.status().message(),
            path.string() +
                " entry 'x.npy': float32[786432] needs 3.0 MiB, over the limit of 2.5 MiB "
                "(--max-tensor-bytes)");
}

// Within the limit, a deflated member is inflated straight into its tensor and its CRC checked.
TEST(Npz, ALargeDeflatedMemberWithinTheLimitIsRead) {
  TempDir dir;
  const std::filesystem::path path = dir / "zeros.npz";
  testing::WriteAll(path, convgate::testing::ZeroBombNpz("x", 16 * kMiB));
  Result<TensorMap> tensors = ReadNpz(path, TensorLimit(64 * kMiB));
  ASSERT_TRUE(tensors.ok()) << tensors.status().ToString();
  const Tensor* x = tensors->Find("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->Describe(), "float32[16777216]");
  const std::span<const float> values = x->data<float>();
  EXPECT_TRUE(std::all_of(values.begin(), values.end(), [](float v) { return v == 0.0f; }));
  EXPECT_EQ(ReadNpz(path, TensorLimit(64 * kMiB - 1)).status().code(),
            StatusCode::kFailedPrecondition);
}

// Members each under --max-tensor-bytes are held together: their declared sizes in all are held
// to --max-run-bytes before any is read.
TEST(Npz, MembersOverTheRunLimitInAllAreRefused) {
  TempDir dir;
  TensorMap tensors;
  ASSERT_TRUE(tensors.Insert("a", PatternTensor(DType::kFloat32, Shape::Of({1024}))).ok());
  ASSERT_TRUE(tensors.Insert("b", PatternTensor(DType::kFloat32, Shape::Of({1024}))).ok());
  ASSERT_TRUE(WriteNpz(dir / "two.npz", tensors).ok());
  Limits limits;
  limits.max_run_bytes = 6000;
  Result<TensorMap> read = ReadNpz(dir / "two.npz", limits);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            (dir / "two.npz").string() +
                ": its members declare 8.2 KiB uncompressed in all, over the limit of 5.9 KiB "
                "(--max-run-bytes)");
  limits.max_run_bytes = 9000;
  EXPECT_TRUE(ReadNpz(dir / "two.npz", limits).ok());
}

TEST(Npz, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "inputs.npz").c_str(), 0600), 0);
  Result<TensorMap> read = ReadNpz(dir / "inputs.npz");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            (dir / "inputs.npz").string() + " is a FIFO, not a regular file");
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
