// SniffFile: every format told by content, whatever the file is named, and the folder layouts.
#include "convgate/io/file_format.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/test_case.h"
#include "io/io_test_util.h"

namespace convgate::io {
namespace {

namespace fs = std::filesystem;

template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

std::string LittleEndian64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int idx = 0; idx < 8; ++idx) bytes[idx] = static_cast<char>((value >> (8 * idx)) & 0xff);
  return bytes;
}

class SniffFileTest : public ::testing::Test {
 protected:
  // Writes `bytes` under a name that says nothing about the format, and sniffs it.
  SniffedFile Sniff(const std::string& bytes) {
    const fs::path path = dir_ / ("file" + std::to_string(count_++) + ".onnx");
    EXPECT_TRUE(WriteFileAtomic(path, bytes).ok());
    Result<SniffedFile> sniffed = SniffFile(path);
    EXPECT_TRUE(sniffed.ok()) << sniffed.status().ToString();
    return sniffed.ok() ? *sniffed : SniffedFile{};
  }
  FileFormat Format(const std::string& bytes) { return Sniff(bytes).format; }

  FileFormat ZipFormat(const std::vector<std::string>& names) {
    std::vector<testing::ZipMember> members;
    for (const std::string& name : names) members.push_back({name, "x"});
    return Format(testing::MakeZip(members));
  }

  testing::TempDir dir_;
  int count_ = 0;
};

TEST_F(SniffFileTest, TellsZipFormatsByTheirMembers) {
  EXPECT_EQ(ZipFormat({"a.npy", "b.npy"}), FileFormat::kNpz);
  EXPECT_EQ(ZipFormat({"m/data.pkl", "m/code/__torch__.py", "m/constants.pkl", "m/data/0"}),
            FileFormat::kTorchScript);
  EXPECT_EQ(ZipFormat({"state/data.pkl", "state/data/0", "state/version"}),
            FileFormat::kPyTorchZip);
  EXPECT_EQ(ZipFormat({"config.json", "metadata.json", "model.weights.h5"}), FileFormat::kKerasZip);
  EXPECT_EQ(ZipFormat({"readme.txt"}), FileFormat::kZip);
  const SniffedFile torch = Sniff(testing::MakeZip({{"m/constants.pkl", "abc"}}));
  ASSERT_EQ(torch.members.size(), 1u);
  EXPECT_EQ(torch.members[0].name, "m/constants.pkl");
  EXPECT_EQ(torch.members[0].size, 3u);
}

TEST_F(SniffFileTest, TellsFormatsByTheirMagicBytes) {
  EXPECT_EQ(Format(Bytes("\x93NUMPY\x01\x00")), FileFormat::kNpy);
  EXPECT_EQ(Format(Bytes("\x89HDF\r\n\x1a\n\0\0")), FileFormat::kHdf5);
  EXPECT_EQ(Format("GGUF\x03\0\0\0"), FileFormat::kGguf);
  EXPECT_EQ(Format(Bytes("\x1c\0\0\0TFL3\0\0")), FileFormat::kTfLite);
  EXPECT_EQ(Format(Bytes("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")),
            FileFormat::kPyTorchLegacy);
  const SniffedFile pickle = Sniff(Bytes("\x80\x04\x95\x0a\0\0\0\0\0\0\0}\x94."));
  EXPECT_EQ(pickle.format, FileFormat::kPickle);
  EXPECT_EQ(pickle.pickle_protocol, 4);
  EXPECT_EQ(Format("\xef\xbb\xbf<?xml version=\"1.0\"?>\n<net name=\"m\" version=\"11\">"),
            FileFormat::kOpenVinoXml);
  EXPECT_EQ(Format("<?xml version=\"1.0\"?>\n<svg/>"), FileFormat::kOther);
  EXPECT_EQ(Format(""), FileFormat::kEmpty);
  EXPECT_EQ(Format("hello"), FileFormat::kOther);  // ONNX and the unknown: the caller decides
}

TEST_F(SniffFileTest, ReadsASafetensorsHeaderAndRefusesOneLongerThanTheFile) {
  const std::string header = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const SniffedFile sniffed = Sniff(LittleEndian64(header.size()) + header + "abcd");
  EXPECT_EQ(sniffed.format, FileFormat::kSafetensors);
  EXPECT_EQ(sniffed.safetensors_header, header);
  const fs::path cut = dir_ / "cut.safetensors";
  ASSERT_TRUE(WriteFileAtomic(cut, LittleEndian64(1000) + header).ok());
  Result<SniffedFile> truncated = SniffFile(cut);
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(truncated.status().message().find("truncated"), std::string::npos);
}

TEST_F(SniffFileTest, ATruncatedZipIsDataLossNamingTheFile) {
  const std::string zip = testing::MakeZip({{"m/constants.pkl", std::string(100, 'x')}});
  const fs::path cut = dir_ / "cut.pt";
  ASSERT_TRUE(WriteFileAtomic(cut, zip.substr(0, zip.size() / 2)).ok());
  Result<SniffedFile> sniffed = SniffFile(cut);
  EXPECT_EQ(sniffed.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(sniffed.status().message().find(cut.string()), std::string::npos);
}

// Issue 10: `inspect` of a FIFO or a device names what it is instead of blocking or reading on.
TEST_F(SniffFileTest, FifosAndDevicesAreRefusedByName) {
  ASSERT_EQ(::mkfifo((dir_.path() / "model.onnx").c_str(), 0600), 0);
  Result<SniffedFile> fifo = SniffFile(dir_ / "model.onnx");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(fifo.status().message(),
            (dir_ / "model.onnx").string() + " is a FIFO, not a regular file");
  EXPECT_EQ(SniffFile("/dev/zero").status().message(),
            "/dev/zero is a character device, not a regular file");
}

TEST_F(SniffFileTest, TellsFolderLayouts) {
  TensorMap inputs;
  ASSERT_TRUE(
      inputs.Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1.0f})).ok());
  ASSERT_TRUE(WriteTestDataSet(dir_ / "case", 0, inputs, {}).ok());
  fs::create_directories(dir_ / "saved");
  std::ofstream(dir_ / "saved" / "saved_model.pb") << "x";
  fs::create_directories(dir_ / "plain");
  EXPECT_EQ(SniffFile(dir_ / "case")->format, FileFormat::kOnnxTestCase);
  EXPECT_EQ(SniffFile(dir_ / "case" / "test_data_set_0")->format, FileFormat::kOnnxTestDataSet);
  EXPECT_EQ(SniffFile(dir_ / "saved")->format, FileFormat::kTfSavedModel);
  EXPECT_EQ(SniffFile(dir_ / "plain")->format, FileFormat::kDirectory);
  EXPECT_EQ(SniffFile(dir_ / "missing").status().code(), StatusCode::kNotFound);
}

TEST_F(SniffFileTest, ReadsAZipMember) {
  const fs::path zip = dir_ / "m.pt";
  ASSERT_TRUE(WriteFileAtomic(zip, testing::MakeZip({{"m/code/a.py", "class A"}})).ok());
  EXPECT_EQ(*ReadZipMember(zip, "m/code/a.py", 100), "class A");
  EXPECT_EQ(ReadZipMember(zip, "m/none", 100).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadZipMember(zip, "m/code/a.py", 3).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace convgate::io
