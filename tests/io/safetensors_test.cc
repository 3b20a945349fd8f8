// The safetensors reader: files the real library wrote (the fuzz seeds), round trips of every
// dtype, and a handcrafted corrupt file for every error path.
#include "convgate/io/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace convgate::io {
namespace {

namespace fs = std::filesystem;

const fs::path kSeeds = fs::path(CONVGATE_SOURCE_DIR) / "fuzz/corpus/safetensors";

// 8-byte little-endian length, the header text, the data.
std::string Make(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (int byte_idx = 0; byte_idx < 8; ++byte_idx) {
    out[byte_idx] = static_cast<char>((uint64_t{header.size()} >> (8 * byte_idx)) & 0xff);
  }
  return out + header + data;
}

Status ParseError(const std::string& bytes) {
  Result<SafetensorsFile> file = ParseSafetensors(bytes, "bad.safetensors");
  EXPECT_FALSE(file.ok());
  if (file.ok()) return Status::OK();
  EXPECT_NE(file.status().message().find("bad.safetensors"), std::string::npos)
      << file.status().message();
  return file.status();
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::vector<T> values(tensor.byte_size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes().data(), tensor.byte_size());
  return values;
}

TEST(Safetensors, ReadsWhatTheSafetensorsLibraryWrote) {
  Result<SafetensorsFile> file = ReadSafetensors(kSeeds / "f32_i64.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  const Tensor* w = file->tensors.Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype(), DType::kFloat32);
  EXPECT_EQ(w->shape(), Shape::Of({2, 3}));
  EXPECT_EQ(Values<float>(*w), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Values<int64_t>(*file->tensors.Find("b")), (std::vector<int64_t>{1, -2}));

  Result<SafetensorsFile> mixed = ReadSafetensors(kSeeds / "bf16_mixed.safetensors");
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  const Tensor* bf = mixed->tensors.Find("bf");
  ASSERT_NE(bf, nullptr);
  EXPECT_EQ(bf->dtype(), DType::kBFloat16);
  // bfloat16 is the top half of float32: 1.0 = 0x3F80, 2.5 = 0x4020, -3.0 = 0xC040.
  EXPECT_EQ(Values<uint16_t>(*bf), (std::vector<uint16_t>{0x3F80, 0x4020, 0xC040}));
  EXPECT_EQ(mixed->tensors.Find("empty")->shape(), Shape::Of({0, 4}));
  EXPECT_EQ(mixed->tensors.Find("scalar")->shape(), Shape());
  EXPECT_EQ(Values<int32_t>(*mixed->tensors.Find("scalar")), std::vector<int32_t>{7});

  Result<SafetensorsFile> half = ReadSafetensors(kSeeds / "f16_bool.safetensors");
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  // float16 1.5 = 0x3E00, -0.25 = 0xB400, inf = 0x7C00.
  EXPECT_EQ(Values<uint16_t>(*half->tensors.Find("h")),
            (std::vector<uint16_t>{0x3E00, 0xB400, 0x7C00}));
  EXPECT_EQ(half->tensors.Find("flag")->dtype(), DType::kBool);
}

TEST(Safetensors, EveryDTypeRoundTrips) {
  TensorMap tensors;
  for (DType dtype : kAllDTypes) {
    Result<Tensor> tensor = Tensor::Allocate(dtype, Shape::Of({2, 2}));
    ASSERT_TRUE(tensor.ok());
    for (size_t byte_idx = 0; byte_idx < tensor->byte_size(); ++byte_idx) {
      tensor->bytes()[byte_idx] =
          static_cast<std::byte>(dtype == DType::kBool ? byte_idx % 2 : byte_idx * 7 + 1);
    }
    ASSERT_TRUE(tensors.Insert(std::string(DTypeName(dtype)), std::move(tensor).value()).ok());
  }
  Result<std::string> bytes = SerializeSafetensors(tensors, {{"k", "v"}});
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(static_cast<unsigned char>((*bytes)[0]) % 8, 0);  // padded as save_file pads
  Result<SafetensorsFile> back = ParseSafetensors(*bytes, "mem");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->metadata.at("k"), "v");
  ASSERT_EQ(back->tensors.size(), tensors.size());
  for (const auto& entry : tensors) {
    const Tensor* read = back->tensors.Find(entry.name);
    ASSERT_NE(read, nullptr) << entry.name;
    EXPECT_TRUE(read->BitwiseEquals(entry.tensor)) << entry.name;
  }
  Result<Tensor> strings = Tensor::FromStrings(Shape::Of({1}), {"x"});
  ASSERT_TRUE(strings.ok());
  TensorMap with_string;
  ASSERT_TRUE(with_string.Insert("s", std::move(strings).value()).ok());
  EXPECT_EQ(SerializeSafetensors(with_string).status().code(), StatusCode::kInvalidArgument);
}

TEST(Safetensors, BoolBytesOtherThanZeroReadAsOne) {
  Result<SafetensorsFile> file =
      ParseSafetensors(Make(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                            std::string("\x00\x07\x01", 3)),
                       "b.safetensors");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(Values<uint8_t>(*file->tensors.Find("b")), (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Safetensors, CorruptFilesAreDataLossNamingTheProblem) {
  const std::string f32 = R"("dtype":"F32","shape":[2])";
  const std::string eight(8, '\0');
  struct Case {
    std::string bytes;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "0 bytes, shorter than the 8-byte header length"},
      {std::string("\x05\x00\x00", 3), "shorter than the 8-byte header length"},
      {Make("{}", "").substr(0, 9), "a header of 2 bytes in a file of 9"},
      {std::string("\xff\xff\xff\xff\x00\x00\x00\x00{}", 10), "over safetensors' 100 MB"},
      {Make("[]", ""), "the header is not a JSON object"},
      {Make(" {}", ""), "the header is not a JSON object"},
      {Make("{\"a\":", ""), "the header is not a JSON object"},
      {Make(R"({"a":{"dtype":"F32","shape":[2]}})", eight),
       "expected exactly dtype, shape and data_offsets"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0,8],"x":1}})", eight), "expected exactly"},
      {Make(R"({"a":{"dtype":3,"shape":[2],"data_offsets":[0,8]}})", eight),
       "'dtype' is not a string"},
      {Make(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", eight),
       "not a non-negative integer"},
      {Make(R"({"a":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", eight),
       "'shape' is not a list"},
      {Make(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", eight),
       "tensor 'a'"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[8,0]}})", eight), "end before they begin"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0]}})", eight),
       "'data_offsets' is not [begin, end]"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0,4]}})", eight),
       "needs 2 x 4 bytes, data_offsets [0,4] hold 4"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0,8]}})", "1234"),
       "cover 8 bytes of data, the file holds 4 (truncated: tensor 'a' is cut short)"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0,8]}})", eight + "x"), "(trailing bytes)"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[4,12]}})", eight + "1234"),
       "begins at byte 4 of the data, expected 0 (a hole)"},
      {Make(R"({"a":{)" + f32 + R"(,"data_offsets":[0,8]},"b":{)" + f32 +
                R"(,"data_offsets":[4,12]}})",
            eight + "1234"),
       "tensor 'b' begins at byte 4 of the data, expected 8 (overlap)"},
      {Make(R"({"__metadata__":{"k":1}})", ""), "__metadata__ 'k' is not a string"},
      {Make(R"({"__metadata__":[]})", ""), "__metadata__ is not an object"},
  };
  for (const Case& c : cases) {
    const Status status = ParseError(c.bytes);
    EXPECT_EQ(status.code(), StatusCode::kDataLoss) << c.message << ": " << status.ToString();
    EXPECT_NE(status.message().find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << status.message();
  }
}

TEST(Safetensors, UnsupportedDTypesAndLimits) {
  const Status fp8 =
      ParseError(Make(R"({"q":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", "x"));
  EXPECT_EQ(fp8.code(), StatusCode::kUnimplemented);
  EXPECT_NE(fp8.message().find("tensor 'q': dtype F8_E4M3 is not supported"), std::string::npos);

  Limits limits;
  limits.max_tensor_bytes = 4;
  Result<SafetensorsFile> big = ParseSafetensors(
      Make(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')),
      "big.safetensors", limits);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(big.status().message().find("big.safetensors: tensor 'a' needs"), std::string::npos)
      << big.status().message();
  EXPECT_NE(big.status().message().find("(--max-tensor-bytes)"), std::string::npos);

  EXPECT_EQ(ReadSafetensors("/nonexistent/x.safetensors").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace convgate::io
