#include "convgate/io/tensor_proto.h"

#include <gtest/gtest.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <limits>
#include <string>
#include <vector>

#include "io/io_test_util.h"

namespace convgate::io {
namespace {

using testing::PatternTensor;
using testing::TempDir;

onnx::TensorProto MakeProto(int data_type, std::vector<int64_t> dims, std::string name = "t") {
  onnx::TensorProto proto;
  proto.set_name(std::move(name));
  proto.set_data_type(data_type);
  for (int64_t dim : dims) proto.add_dims(dim);
  return proto;
}

Tensor MustParse(const onnx::TensorProto& proto) {
  Result<NamedTensorProto> parsed = ParseTensorProto(proto.SerializeAsString(), "test.pb");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return Tensor();
  return std::move(parsed->tensor);
}

std::vector<double> Doubles(const Tensor& tensor) {
  std::vector<double> values;
  for (int64_t flat = 0; flat < tensor.num_elements(); ++flat) {
    values.push_back(tensor.GetDouble(flat));
  }
  return values;
}

TEST(TensorProto, RoundTripsEveryDType) {
  const std::vector<Shape> shapes = {Shape(), Shape::Of({0}), Shape::Of({5}), Shape::Of({2, 3, 2}),
                                     Shape::Of({3, 0})};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      const Tensor tensor = PatternTensor(dtype, shape, 7);
      Result<NamedTensorProto> back =
          ParseTensorProto(SerializeTensorProto(tensor, "x:0"), "round trip");
      ASSERT_TRUE(back.ok()) << tensor.Describe() << ": " << back.status().ToString();
      EXPECT_EQ(back->name, "x:0");
      EXPECT_TRUE(back->tensor.BitwiseEquals(tensor)) << tensor.Describe();
    }
  }
}

TEST(TensorProto, WriteThenReadFile) {
  TempDir dir;
  const Tensor tensor = PatternTensor(DType::kBFloat16, Shape::Of({3, 4}));
  ASSERT_TRUE(WriteTensorProto(dir / "input_0.pb", tensor, "").ok());
  Result<NamedTensorProto> back = ReadTensorProto(dir / "input_0.pb");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, "");
  EXPECT_TRUE(back->tensor.BitwiseEquals(tensor));
  // What onnx.numpy_helper writes: raw_data, dims and data_type BFLOAT16 (16).
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(testing::ReadAll(dir / "input_0.pb")));
  EXPECT_EQ(proto.data_type(), onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(proto.dims_size(), 2);
  EXPECT_EQ(proto.raw_data().size(), 24u);
}

// Issue 10: varints make a TensorProto up to 8 times smaller than its tensor (one byte per int64
// zero), so the tensor, not the file, is held to --max-tensor-bytes, before it is allocated.
TEST(TensorProto, ATensorOverTheLimitIsRefusedBeforeItIsAllocated) {
  TempDir dir;
  onnx::TensorProto proto;
  proto.set_name("ids");
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims(1 << 20);
  for (int idx = 0; idx < (1 << 20); ++idx) proto.add_int64_data(0);
  testing::WriteAll(dir / "input_0.pb", proto.SerializeAsString());
  Limits limits;
  limits.max_tensor_bytes = 4 << 20;
  Result<NamedTensorProto> read = ReadTensorProto(dir / "input_0.pb", limits);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(read.status().message(),
            (dir / "input_0.pb").string() +
                ": tensor 'ids': int64[1048576] needs 8.0 MiB, over the limit of 4.0 MiB "
                "(--max-tensor-bytes)");
  limits.max_tensor_bytes = 8 << 20;
  EXPECT_TRUE(ReadTensorProto(dir / "input_0.pb", limits).ok());
  EXPECT_EQ(ReadTensorProto("/dev/zero").status().message(),
            "/dev/zero is a character device, not a regular file");
}

TEST(TensorProto, TypeNumbersFollowOnnxProto) {
  const std::pair<DType, int> expected[] = {
      {DType::kFloat32, 1},   {DType::kUInt8, 2},    {DType::kInt8, 3},    {DType::kUInt16, 4},
      {DType::kInt16, 5},     {DType::kInt32, 6},    {DType::kInt64, 7},   {DType::kBool, 9},
      {DType::kFloat16, 10},  {DType::kFloat64, 11}, {DType::kUInt32, 12}, {DType::kUInt64, 13},
      {DType::kBFloat16, 16}, {DType::kString, 8},
  };
  for (const auto& [dtype, number] : expected) {
    EXPECT_EQ(OnnxFromDType(dtype), number) << DTypeName(dtype);
    EXPECT_EQ(DTypeFromOnnx(number), dtype) << number;
  }
  for (int unsupported : {0, 14, 15, 17, 23, 99, -1}) {
    EXPECT_FALSE(DTypeFromOnnx(unsupported).has_value()) << unsupported;
  }
  EXPECT_EQ(OnnxElemTypeName(1), "FLOAT");
  EXPECT_EQ(OnnxElemTypeName(8), "STRING");
  EXPECT_EQ(OnnxElemTypeName(15), "COMPLEX128");
  EXPECT_EQ(OnnxElemTypeName(16), "BFLOAT16");
  EXPECT_EQ(OnnxElemTypeName(19), "FLOAT8E5M2");
  EXPECT_EQ(OnnxElemTypeName(42), "type 42");
  EXPECT_EQ(OnnxElemTypeName(-3), "type -3");
}

TEST(TensorProto, ReadsTypedFieldsAsTheSpecPacksThem) {
  onnx::TensorProto floats = MakeProto(onnx::TensorProto::FLOAT, {2});
  floats.add_float_data(1.5f);
  floats.add_float_data(-2.0f);
  EXPECT_EQ(Doubles(MustParse(floats)), (std::vector<double>{1.5, -2.0}));

  onnx::TensorProto doubles = MakeProto(onnx::TensorProto::DOUBLE, {1});
  doubles.add_double_data(0.1);
  EXPECT_EQ(Doubles(MustParse(doubles)), (std::vector<double>{0.1}));

  const struct {
    int type;
    std::vector<int32_t> stored;
    std::vector<double> read;
  } int32_cases[] = {
      {onnx::TensorProto::INT32,
       {-5, 7, std::numeric_limits<int32_t>::min()},
       {-5, 7, -2147483648.0}},
      {onnx::TensorProto::INT16, {-300, 300, -32768}, {-300, 300, -32768}},
      {onnx::TensorProto::INT8, {-128, 127, 0}, {-128, 127, 0}},
      {onnx::TensorProto::UINT8, {0, 255, 7}, {0, 255, 7}},
      {onnx::TensorProto::UINT16, {0, 65535, 9}, {0, 65535, 9}},
      {onnx::TensorProto::BOOL, {0, 1, 5}, {0, 1, 1}},
      // Bit patterns in the low 16 bits: 1.0, -2.0 and +inf in binary16 ...
      {onnx::TensorProto::FLOAT16,
       {0x3C00, 0xC000, 0x7C00},
       {1, -2, std::numeric_limits<double>::infinity()}},
      // ... and in bfloat16.
      {onnx::TensorProto::BFLOAT16, {0x3F80, 0xC000, 0x0000}, {1, -2, 0}},
  };
  for (const auto& c : int32_cases) {
    onnx::TensorProto proto = MakeProto(c.type, {3});
    for (int32_t value : c.stored) proto.add_int32_data(value);
    EXPECT_EQ(Doubles(MustParse(proto)), c.read) << OnnxElemTypeName(c.type);
  }

  onnx::TensorProto int64s = MakeProto(onnx::TensorProto::INT64, {2});
  int64s.add_int64_data(std::numeric_limits<int64_t>::min());
  int64s.add_int64_data(std::numeric_limits<int64_t>::max());
  Tensor int64_tensor = MustParse(int64s);
  EXPECT_EQ(int64_tensor.data<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(int64_tensor.data<int64_t>()[1], std::numeric_limits<int64_t>::max());

  onnx::TensorProto uint32s = MakeProto(onnx::TensorProto::UINT32, {2});
  uint32s.add_uint64_data(0);
  uint32s.add_uint64_data(4294967295u);
  EXPECT_EQ(Doubles(MustParse(uint32s)), (std::vector<double>{0, 4294967295.0}));

  onnx::TensorProto uint64s = MakeProto(onnx::TensorProto::UINT64, {});
  uint64s.add_uint64_data(std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(MustParse(uint64s).data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
}

TEST(TensorProto, ReadsStringData) {
  onnx::TensorProto proto = MakeProto(onnx::TensorProto::STRING, {2, 2}, "s");
  for (const std::string& value : {std::string("monday"), std::string(""),
                                   std::string("K\xC3\xB6ln"), std::string("\xff\0x", 3)}) {
    proto.add_string_data(value);
  }
  const Tensor tensor = MustParse(proto);
  EXPECT_EQ(tensor.Describe(), "string[2, 2]");
  EXPECT_EQ(std::vector<std::string>(tensor.strings().begin(), tensor.strings().end()),
            (std::vector<std::string>{"monday", "", "K\xC3\xB6ln", std::string("\xff\0x", 3)}));
  EXPECT_EQ(MustParse(MakeProto(onnx::TensorProto::STRING, {0})).Describe(), "string[0]");
}

TEST(TensorProto, WritesStringsInStringData) {
  const Tensor tensor =
      std::move(Tensor::FromStrings(Shape::Of({3}), {"a", "", std::string("\0\xfe", 2)}).value());
  const std::string bytes = SerializeTensorProto(tensor, "words");
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  EXPECT_EQ(proto.data_type(), onnx::TensorProto::STRING);
  EXPECT_FALSE(proto.has_raw_data());
  ASSERT_EQ(proto.string_data_size(), 3);
  EXPECT_EQ(proto.string_data(2), std::string("\0\xfe", 2));
  Result<NamedTensorProto> back = ParseTensorProto(bytes, "round trip");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->tensor.BitwiseEquals(tensor));
  TempDir dir;
  ASSERT_TRUE(WriteTensorProto(dir / "output_0.pb", tensor, "").ok());
  Result<NamedTensorProto> file = ReadTensorProto(dir / "output_0.pb");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_TRUE(file->tensor.BitwiseEquals(tensor));
}

TEST(TensorProto, EmptyTensorsNeedNoData) {
  EXPECT_EQ(MustParse(MakeProto(onnx::TensorProto::FLOAT, {0, 3})).shape(), Shape::Of({0, 3}));
  onnx::TensorProto empty_raw = MakeProto(onnx::TensorProto::INT64, {0});
  empty_raw.set_raw_data("");
  EXPECT_EQ(MustParse(empty_raw).num_elements(), 0);
}

struct BadProto {
  std::string label;
  std::string bytes;
  StatusCode code;
  std::string problem;
};

std::string WithRaw(onnx::TensorProto proto, std::string raw) {
  proto.set_raw_data(std::move(raw));
  return proto.SerializeAsString();
}

std::vector<BadProto> BadProtoCases() {
  const onnx::TensorProto floats4 = MakeProto(onnx::TensorProto::FLOAT, {4}, "x");
  const std::string good = WithRaw(floats4, std::string(16, '\x01'));
  onnx::TensorProto external = floats4;
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = external.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  onnx::TensorProto strings_too_few = MakeProto(onnx::TensorProto::STRING, {2}, "s");
  strings_too_few.add_string_data("hello");
  onnx::TensorProto floats_as_strings = floats4;
  for (int idx = 0; idx < 4; ++idx) floats_as_strings.add_string_data("1");
  onnx::TensorProto strings_as_ints = MakeProto(onnx::TensorProto::STRING, {1}, "s");
  strings_as_ints.add_int32_data(1);
  onnx::TensorProto segmented = floats4;
  segmented.mutable_segment()->set_begin(0);
  onnx::TensorProto short_floats = floats4;
  for (float value : {1.0f, 2.0f, 3.0f}) short_floats.add_float_data(value);
  onnx::TensorProto two_fields = floats4;
  for (float value : {1.0f, 2.0f, 3.0f, 4.0f}) two_fields.add_float_data(value);
  two_fields.set_raw_data(std::string(16, '\0'));
  onnx::TensorProto wrong_field = MakeProto(onnx::TensorProto::INT64, {2}, "x");
  wrong_field.add_int32_data(1);
  wrong_field.add_int32_data(2);
  onnx::TensorProto empty_with_data = MakeProto(onnx::TensorProto::FLOAT, {0}, "x");
  empty_with_data.add_float_data(1.0f);
  return {
      {"garbage", "\xff\xff\xff\xff", StatusCode::kDataLoss, "not a valid TensorProto"},
      {"truncated in raw_data", good.substr(0, good.size() - 5), StatusCode::kDataLoss,
       "not a valid TensorProto"},
      {"text file", "this is not a protobuf\n", StatusCode::kDataLoss, "not a valid TensorProto"},
      {"external data", WithRaw(external, ""), StatusCode::kUnimplemented, "EXTERNAL"},
      {"strings in raw_data", WithRaw(MakeProto(onnx::TensorProto::STRING, {1}, "s"), "hello"),
       StatusCode::kDataLoss, "tensor 's': stores strings in raw_data"},
      {"too few strings", strings_too_few.SerializeAsString(), StatusCode::kDataLoss,
       "string_data holds 1 values, string[2] needs 2"},
      {"floats in string_data", floats_as_strings.SerializeAsString(), StatusCode::kDataLoss,
       "stores float32 values in string_data"},
      {"strings in int32_data", strings_as_ints.SerializeAsString(), StatusCode::kDataLoss,
       "stores string values in int32_data; ONNX puts them in string_data"},
      {"complex", WithRaw(MakeProto(onnx::TensorProto::COMPLEX64, {1}), std::string(8, '\0')),
       StatusCode::kUnimplemented, "COMPLEX64"},
      {"float8", WithRaw(MakeProto(17, {1}), std::string(1, '\0')), StatusCode::kUnimplemented,
       "FLOAT8E4M3FN"},
      {"unknown type", WithRaw(MakeProto(99, {1}), "x"), StatusCode::kUnimplemented, "type 99"},
      {"undefined", WithRaw(MakeProto(0, {1}), "x"), StatusCode::kUnimplemented, "not a tensor"},
      {"segment", WithRaw(segmented, std::string(16, '\0')), StatusCode::kUnimplemented,
       "segmented"},
      {"dims but no data", floats4.SerializeAsString(), StatusCode::kUnimplemented, "not a tensor"},
      {"scalar without data", MakeProto(onnx::TensorProto::FLOAT, {}).SerializeAsString(),
       StatusCode::kUnimplemented, "not a tensor"},
      {"negative dim", WithRaw(MakeProto(onnx::TensorProto::FLOAT, {-1, 4}), "abcd"),
       StatusCode::kDataLoss, "negative"},
      {"dims overflow", WithRaw(MakeProto(onnx::TensorProto::FLOAT, {1ll << 40, 1ll << 40}), "x"),
       StatusCode::kDataLoss, "2^60"},
      {"huge dims, little data",
       WithRaw(MakeProto(onnx::TensorProto::FLOAT, {1ll << 30, 1ll << 20}), "abcd"),
       StatusCode::kDataLoss, "raw_data holds 4 bytes"},
      {"raw too short", WithRaw(floats4, std::string(15, '\0')), StatusCode::kDataLoss,
       "raw_data holds 15 bytes, float32[4] needs 16"},
      {"raw too long", WithRaw(floats4, std::string(17, '\0')), StatusCode::kDataLoss,
       "raw_data holds 17 bytes"},
      {"too few values", short_floats.SerializeAsString(), StatusCode::kDataLoss,
       "float_data holds 3 values, float32[4] needs 4"},
      {"two value fields", two_fields.SerializeAsString(), StatusCode::kDataLoss,
       "both float_data and raw_data"},
      {"wrong field", wrong_field.SerializeAsString(), StatusCode::kDataLoss,
       "stores int64 values in int32_data"},
      {"0-element with data", empty_with_data.SerializeAsString(), StatusCode::kDataLoss,
       "0-element"},
  };
}

TEST(TensorProto, EveryMalformedFileIsRejectedWithTheFileNamed) {
  TempDir dir;
  for (const BadProto& bad : BadProtoCases()) {
    const std::filesystem::path path = dir / "bad.pb";
    testing::WriteAll(path, bad.bytes);
    Result<NamedTensorProto> proto = ReadTensorProto(path);
    ASSERT_FALSE(proto.ok()) << bad.label;
    const Status& status = proto.status();
    EXPECT_EQ(status.code(), bad.code) << bad.label << ": " << status.ToString();
    EXPECT_NE(status.message().find(path.string()), std::string::npos)
        << bad.label << ": " << status.ToString();
    EXPECT_NE(status.message().find(bad.problem), std::string::npos)
        << bad.label << ": " << status.ToString();
  }
}

TEST(TensorProto, SequenceAndOptionalProtosAreNotTensors) {
  onnx::TensorProto element = MakeProto(onnx::TensorProto::FLOAT, {2}, "");
  element.set_raw_data(std::string(8, '\0'));
  onnx::SequenceProto sequence;
  sequence.set_name("seq");
  sequence.set_elem_type(onnx::SequenceProto::TENSOR);
  *sequence.add_tensor_values() = element;
  onnx::OptionalProto optional;
  optional.set_name("opt_in");
  optional.set_elem_type(onnx::OptionalProto::TENSOR);
  *optional.mutable_tensor_value() = element;
  onnx::OptionalProto empty_optional;
  empty_optional.set_name("opt");
  // An optional sequence: its field 5 lands in int32_data, its elem_type (3) makes it "INT8".
  onnx::OptionalProto optional_sequence;
  optional_sequence.set_name("opt_seq");
  optional_sequence.set_elem_type(onnx::OptionalProto::SEQUENCE);
  *optional_sequence.mutable_sequence_value() = sequence;
  onnx::MapProto map;
  map.set_name("m");
  map.set_key_type(onnx::TensorProto::INT64);
  map.add_keys(1);
  for (const std::string& bytes :
       {sequence.SerializeAsString(), optional.SerializeAsString(),
        empty_optional.SerializeAsString(), optional_sequence.SerializeAsString(),
        map.SerializeAsString()}) {
    Result<NamedTensorProto> proto = ParseTensorProto(bytes, "seq.pb");
    ASSERT_FALSE(proto.ok());
    EXPECT_EQ(proto.status().code(), StatusCode::kUnimplemented) << proto.status().ToString();
    EXPECT_NE(proto.status().message().find("seq.pb"), std::string::npos);
    EXPECT_NE(proto.status().message().find("not a tensor"), std::string::npos)
        << proto.status().ToString();
  }
}

TEST(TensorProto, AcceptsPackedDimsFromProto3Writers) {
  // dims [2, 3] packed (field 1, length-delimited), data_type INT32, int32_data 1..6 packed, no
  // name: what a writer built from onnx.proto3 emits. Only containers are rejected, not this.
  const std::string bytes("\x0a\x02\x02\x03\x10\x06\x2a\x06\x01\x02\x03\x04\x05\x06", 14);
  Result<NamedTensorProto> proto = ParseTensorProto(bytes, "packed.pb");
  ASSERT_TRUE(proto.ok()) << proto.status().ToString();
  EXPECT_EQ(proto->tensor.shape(), Shape::Of({2, 3}));
  EXPECT_EQ(proto->tensor.data<int32_t>()[5], 6);
}

TEST(TensorProto, EveryTruncationFailsCleanly) {
  onnx::TensorProto proto = MakeProto(onnx::TensorProto::INT32, {2, 3}, "name");
  proto.set_raw_data(std::string(24, '\x07'));
  const std::string bytes = proto.SerializeAsString();
  for (size_t length = 0; length < bytes.size(); ++length) {
    Result<NamedTensorProto> parsed = ParseTensorProto(bytes.substr(0, length), "prefix");
    ASSERT_FALSE(parsed.ok()) << length;
    EXPECT_NE(parsed.status().message().find("prefix"), std::string::npos);
  }
}

TEST(TensorProto, ReinterpretKeepsBytes) {
  const Tensor bits = PatternTensor(DType::kUInt16, Shape::Of({4}));
  Result<Tensor> bf16 = ReinterpretAs(bits.Clone(), DType::kBFloat16);
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ(bf16->dtype(), DType::kBFloat16);
  EXPECT_EQ(bf16->shape(), bits.shape());
  EXPECT_TRUE(std::equal(bits.bytes().begin(), bits.bytes().end(), bf16->bytes().begin()));
  Result<Tensor> wrong = ReinterpretAs(bits.Clone(), DType::kFloat32);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  const Tensor strings = std::move(Tensor::FromStrings(Shape(), {"ab"}).value());
  EXPECT_FALSE(ReinterpretAs(strings.Clone(), DType::kUInt16).ok());
  EXPECT_FALSE(ReinterpretAs(strings.Clone(), DType::kString).ok());
  EXPECT_FALSE(ReinterpretAs(bits.Clone(), DType::kString).ok());
}

}  // namespace
}  // namespace convgate::io
