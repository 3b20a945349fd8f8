#include "convgate/io/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "io/io_test_util.h"

namespace convgate::io {
namespace {

using testing::PatternTensor;
using testing::TempDir;

// A .npy file with the given header dict and data, unpadded (numpy pads; readers must not care).
std::string MakeNpy(std::string_view dict, std::string_view data = "", int major = 1) {
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const size_t length = dict.size();
  const int width = major == 1 ? 2 : 4;
  for (int byte_idx = 0; byte_idx < width; ++byte_idx) {
    out.push_back(static_cast<char>((length >> (8 * byte_idx)) & 0xFF));
  }
  return out + std::string(dict) + std::string(data);
}

std::string Dict(std::string_view descr, std::string_view shape, bool fortran = false) {
  return "{'descr': '" + std::string(descr) +
         "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + std::string(shape) + ", }\n";
}

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

template <typename T>
std::vector<T> Values(const Tensor& tensor) {
  std::span<const T> data = tensor.data<T>();
  return std::vector<T>(data.begin(), data.end());
}

Tensor MustParse(std::string_view bytes) {
  Result<Tensor> tensor = ParseNpy(bytes, "test.npy");
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  if (!tensor.ok()) return Tensor();
  return std::move(tensor).value();
}

TEST(Npy, RoundTripsEveryDTypeAndShape) {
  const std::vector<Shape> shapes = {Shape(),           Shape::Of({0}),
                                     Shape::Of({3}),    Shape::Of({2, 3, 4}),
                                     Shape::Of({0, 5}), Shape::Of({1, 1})};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      const Tensor tensor = PatternTensor(dtype, shape, static_cast<uint32_t>(dtype));
      Result<Tensor> back = ParseNpy(SerializeNpy(tensor).value(), "round trip");
      ASSERT_TRUE(back.ok()) << tensor.Describe() << ": " << back.status().ToString();
      EXPECT_TRUE(back->BitwiseEquals(tensor)) << tensor.Describe();
    }
  }
}

TEST(Npy, WriteThenReadFile) {
  TempDir dir;
  const Tensor tensor = PatternTensor(DType::kFloat16, Shape::Of({4, 5}));
  ASSERT_TRUE(WriteNpy(dir / "a.npy", tensor).ok());
  Result<Tensor> back = ReadNpy(dir / "a.npy");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->BitwiseEquals(tensor));
  // Read in place: the tensor's bytes are the file's, mapped, and aligned (the header is padded
  // to 64 bytes).
  EXPECT_TRUE(testing::InMappingOf(back->bytes().data(), dir / "a.npy"));
  EXPECT_TRUE(back->IsAligned());
}

TEST(Npy, WritesNumpysHeaderLayout) {
  const std::string npy = SerializeNpy(PatternTensor(DType::kFloat32, Shape::Of({3}))).value();
  ASSERT_GE(npy.size(), 10u);
  EXPECT_EQ(npy.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_length = static_cast<uint8_t>(npy[8]) | (static_cast<uint8_t>(npy[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(npy.size(), 10 + header_length + 12);
  EXPECT_EQ(npy[10 + header_length - 1], '\n');
  EXPECT_EQ(npy.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), 10u);
}

TEST(Npy, DescrsAndShapeSpellings) {
  const struct {
    DType dtype;
    Shape shape;
    std::string_view text;
  } cases[] = {
      {DType::kBFloat16, Shape(), "'descr': '<V2', 'fortran_order': False, 'shape': ()"},
      {DType::kBool, Shape::Of({2, 3}), "'descr': '|b1', 'fortran_order': False, 'shape': (2, 3)"},
      {DType::kInt8, Shape::Of({1}), "'descr': '|i1', 'fortran_order': False, 'shape': (1,)"},
      {DType::kUInt64, Shape::Of({0}), "'descr': '<u8', 'fortran_order': False, 'shape': (0,)"},
  };
  for (const auto& c : cases) {
    EXPECT_NE(SerializeNpyHeader(c.dtype, c.shape).find(c.text), std::string::npos) << c.text;
  }
}

TEST(Npy, HugeRankUsesVersion2Header) {
  // 22000 dims of 1 spell a 66000-byte shape tuple, over version 1.0's uint16 header length.
  Result<Shape> shape = Shape::Make(std::vector<int64_t>(22000, 1));
  ASSERT_TRUE(shape.ok());
  const Tensor tensor = PatternTensor(DType::kInt32, *shape);
  const std::string npy = SerializeNpy(tensor).value();
  EXPECT_EQ(npy[6], '\x02');
  Result<Tensor> back = ParseNpy(npy, "v2");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->BitwiseEquals(tensor));
}

TEST(Npy, ReadsVersion2And3Headers) {
  const std::string data = Bytes<int16_t>({1, -2});
  for (int major : {2, 3}) {
    Tensor tensor = MustParse(MakeNpy(Dict("<i2", "(2,)"), data, major));
    EXPECT_EQ(Values<int16_t>(tensor), (std::vector<int16_t>{1, -2})) << major;
  }
}

TEST(Npy, ReadsBigEndianAsNative) {
  Tensor ints =
      MustParse(MakeNpy(Dict(">i4", "(2,)"), std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
  EXPECT_EQ(Values<int32_t>(ints), (std::vector<int32_t>{258, -2}));
  // 1.0 is 0x3C00 in binary16.
  Tensor half = MustParse(MakeNpy(Dict(">f2", "()"), std::string("\x3c\x00", 2)));
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_EQ(half.GetDouble(0), 1.0);
  Tensor u64 = MustParse(MakeNpy(Dict(">u8", "(1,)"), std::string("\x01\0\0\0\0\0\0\x02", 8)));
  EXPECT_EQ(Values<uint64_t>(u64), (std::vector<uint64_t>{0x0100000000000002ull}));
  // '=' is native order, which convgate requires to be little-endian.
  Tensor native = MustParse(MakeNpy(Dict("=u2", "(1,)"), Bytes<uint16_t>({513})));
  EXPECT_EQ(Values<uint16_t>(native), (std::vector<uint16_t>{513}));
}

TEST(Npy, ConvertsFortranOrderToCOrder) {
  // C array [[0, 1, 2], [3, 4, 5]] stored column by column.
  Tensor matrix =
      MustParse(MakeNpy(Dict("<i2", "(2, 3)", true), Bytes<int16_t>({0, 3, 1, 4, 2, 5})));
  EXPECT_EQ(matrix.shape(), Shape::Of({2, 3}));
  EXPECT_EQ(Values<int16_t>(matrix), (std::vector<int16_t>{0, 1, 2, 3, 4, 5}));
  // A 2x3x2 array: Fortran offset of (i, j, k) is i + 2j + 6k.
  std::vector<int32_t> fortran(12);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) fortran[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    }
  }
  Tensor cube = MustParse(MakeNpy(Dict(">i4", "(2, 3, 2)", true), [&] {
    std::vector<int32_t> swapped = fortran;
    for (int32_t& v : swapped)
      v = static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(v)));
    return Bytes(swapped);
  }()));
  std::vector<int32_t> expected;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 2; ++k) expected.push_back(100 * i + 10 * j + k);
    }
  }
  EXPECT_EQ(Values<int32_t>(cube), expected);
  // Empty Fortran arrays have no data to reorder.
  EXPECT_EQ(MustParse(MakeNpy(Dict("<f4", "(0, 3)", true))).shape(), Shape::Of({0, 3}));
}

TEST(Npy, AcceptsHeaderSpellingsNumpyAccepts) {
  const std::string four = Bytes<float>({1, 2, 3, 4});
  const std::string_view dicts[] = {
      R"({"descr": "<f4", "fortran_order": False, "shape": (2, 2)})",
      "{'shape': (2, 2), 'fortran_order': False, 'descr': '<f4'}",
      "{ 'descr' : '<f4' ,\n\t'fortran_order' : False , 'shape' : ( 2 , 2 , ) , }   \n",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }",  // Python 2
      "{'descr': 'f4', 'fortran_order': False, 'shape': (4,), }",       // no byte order
  };
  for (std::string_view dict : dicts) {
    Tensor tensor = MustParse(MakeNpy(dict, four));
    EXPECT_EQ(tensor.num_elements(), 4) << dict;
    EXPECT_EQ(tensor.GetDouble(3), 4.0) << dict;
  }
}

TEST(Npy, ReadsBFloat16FromVoidDescrs) {
  // A void has no byte order, so numpy keeps the bytes of '>V2' as they are; so does convgate.
  for (std::string_view descr : {"<V2", "|V2", ">V2"}) {
    Tensor tensor = MustParse(MakeNpy(Dict(descr, "(2,)"), Bytes<uint16_t>({0x3F80, 0xC000})));
    EXPECT_EQ(tensor.dtype(), DType::kBFloat16) << descr;
    EXPECT_EQ(tensor.GetDouble(0), 1.0);
    EXPECT_EQ(tensor.GetDouble(1), -2.0);
  }
}

TEST(Npy, NormalizesBoolBytes) {
  Tensor tensor = MustParse(MakeNpy(Dict("|b1", "(3,)"), std::string("\x00\x02\xff", 3)));
  EXPECT_EQ(Values<uint8_t>(tensor), (std::vector<uint8_t>{0, 1, 1}));
}

struct BadNpy {
  std::string label;
  std::string bytes;
  StatusCode code;
  std::string problem;  // a substring of the message
};

std::vector<BadNpy> BadNpyCases() {
  const std::string four_floats = Bytes<float>({1, 2, 3, 4});
  return {
      {"empty file", "", StatusCode::kDataLoss, "bad magic"},
      {"bad magic", "\x93NUMPZ\x01\x00\x00\x00", StatusCode::kDataLoss, "bad magic"},
      {"short magic", "\x93NUM", StatusCode::kDataLoss, "bad magic"},
      {"version 4.0", MakeNpy(Dict("<f4", "()"), "", 4), StatusCode::kUnimplemented, "4.0"},
      {"version 1.1", std::string("\x93NUMPY\x01\x01\x00\x00", 10), StatusCode::kUnimplemented,
       "1.1"},
      {"missing length", std::string("\x93NUMPY\x02\x00\x10\x00", 10), StatusCode::kDataLoss,
       "truncated header length"},
      {"truncated header", MakeNpy(Dict("<f4", "(4,)")).substr(0, 30), StatusCode::kDataLoss,
       "truncated header"},
      {"header a list", MakeNpy("[1, 2]"), StatusCode::kDataLoss, "expected a dict, got list"},
      {"header a string", MakeNpy("'descr'"), StatusCode::kDataLoss, "expected a dict"},
      {"header garbage", MakeNpy("{'descr': <f4}"), StatusCode::kDataLoss, "expected a string"},
      {"header unterminated", MakeNpy("{'descr': '<f4'"), StatusCode::kDataLoss, "expected ','"},
      {"unterminated string", MakeNpy("{'descr: 1}"), StatusCode::kDataLoss, "unterminated"},
      {"text after dict", MakeNpy(Dict("<f4", "()") + "x", four_floats.substr(0, 4)),
       StatusCode::kDataLoss, "after the literal"},
      {"missing key", MakeNpy("{'descr': '<f4', 'shape': ()}"), StatusCode::kDataLoss, "lacks"},
      {"extra key",
       MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", "abcd"),
       StatusCode::kDataLoss, "unexpected header key 'x'"},
      {"duplicate key", MakeNpy("{'descr': '<f4', 'descr': '<f4'}"), StatusCode::kDataLoss,
       "duplicate key"},
      {"fortran_order not bool",
       MakeNpy("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", "abcd"), StatusCode::kDataLoss,
       "'fortran_order'"},
      {"shape not a tuple", MakeNpy(Dict("<f4", "[4]"), four_floats), StatusCode::kDataLoss,
       "expected a tuple, got list"},
      {"shape (4) is an int", MakeNpy(Dict("<f4", "(4)"), four_floats), StatusCode::kDataLoss,
       "expected a tuple, got integer"},
      {"shape holds a string", MakeNpy(Dict("<f4", "(2, 'a')")), StatusCode::kDataLoss,
       "expected integers"},
      {"negative dim", MakeNpy(Dict("<f4", "(-1, 3)")), StatusCode::kDataLoss, "negative"},
      {"dims overflow", MakeNpy(Dict("<f4", "(4294967296, 4294967296)")), StatusCode::kDataLoss,
       "2^60"},
      {"dim beyond int64", MakeNpy(Dict("<f4", "(99999999999999999999,)")), StatusCode::kDataLoss,
       "64 bits"},
      {"bad descr", MakeNpy(Dict("xyz", "()")), StatusCode::kDataLoss, "bad descr 'xyz'"},
      {"empty descr", MakeNpy(Dict("", "()")), StatusCode::kDataLoss, "bad descr"},
      {"odd float size", MakeNpy(Dict("<f3", "()")), StatusCode::kDataLoss, "bad descr"},
      {"descr an int", MakeNpy("{'descr': 4, 'fortran_order': False, 'shape': ()}"),
       StatusCode::kDataLoss, "'descr': expected a string"},
      {"complex", MakeNpy(Dict("<c8", "()")), StatusCode::kUnimplemented, "'<c8'"},
      {"object", MakeNpy(Dict("|O", "()")), StatusCode::kUnimplemented, "'|O'"},
      {"unicode without width", MakeNpy(Dict("<U", "()")), StatusCode::kDataLoss, "bad descr '<U'"},
      {"unicode width not a number", MakeNpy(Dict("<U3x", "()")), StatusCode::kDataLoss,
       "bad descr '<U3x'"},
      {"unicode width 0", MakeNpy(Dict("<U0", "(5,)")), StatusCode::kDataLoss, "width 0"},
      {"bytes width beyond 2^32", MakeNpy(Dict("|S4294967297", "()")), StatusCode::kDataLoss,
       "width 4294967297"},
      {"unicode width beyond size_t", MakeNpy(Dict("<U99999999999999999999", "()")),
       StatusCode::kDataLoss, "bad descr"},
      {"strings overflow size_t", MakeNpy(Dict("<U4294967296", "(1152921504606846976,)")),
       StatusCode::kDataLoss, "more than 2^64 bytes"},
      {"unicode truncated", MakeNpy(Dict("<U2", "(2,)"), std::string(12, 'a')),
       StatusCode::kDataLoss, "string[2] needs 16 data bytes, the file has 12"},
      {"surrogate", MakeNpy(Dict("<U1", "(2,)"), std::string("a\0\0\0\0\xd8\0\0", 8)),
       StatusCode::kDataLoss, "element [1]: character 0 is 0xD800"},
      {"beyond U+10FFFF", MakeNpy(Dict(">U1", "()"), std::string("\0\x11\0\0", 4)),
       StatusCode::kDataLoss, "element []: character 0 is 0x110000"},
      {"datetime", MakeNpy(Dict("<M8[D]", "()")), StatusCode::kUnimplemented, "'<M8[D]'"},
      {"long double", MakeNpy(Dict("<f16", "()")), StatusCode::kUnimplemented, "'<f16'"},
      {"void of 4", MakeNpy(Dict("|V4", "()")), StatusCode::kUnimplemented, "'|V4'"},
      {"structured",
       MakeNpy("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}", "abcd"),
       StatusCode::kUnimplemented, "structured"},
      {"nested too deeply", MakeNpy("{'descr': " + std::string(100, '[')), StatusCode::kDataLoss,
       "nested too deeply"},
      {"truncated data", MakeNpy(Dict("<f4", "(4,)"), four_floats.substr(0, 9)),
       StatusCode::kDataLoss, "needs 16 data bytes, the file has 9 (truncated)"},
      {"data but for a scalar", MakeNpy(Dict("<f8", "()")), StatusCode::kDataLoss, "truncated"},
      {"trailing bytes", MakeNpy(Dict("<f4", "(4,)"), four_floats + "junk"), StatusCode::kDataLoss,
       "trailing bytes"},
  };
}

TEST(Npy, EveryMalformedFileIsRejectedWithTheFileNamed) {
  TempDir dir;
  for (const BadNpy& bad : BadNpyCases()) {
    const std::filesystem::path path = dir / "bad.npy";
    testing::WriteAll(path, bad.bytes);
    Result<Tensor> tensor = ReadNpy(path);
    ASSERT_FALSE(tensor.ok()) << bad.label;
    EXPECT_EQ(tensor.status().code(), bad.code) << bad.label << ": " << tensor.status().ToString();
    EXPECT_NE(tensor.status().message().find(path.string()), std::string::npos)
        << bad.label << ": " << tensor.status().ToString();
    EXPECT_NE(tensor.status().message().find(bad.problem), std::string::npos)
        << bad.label << ": " << tensor.status().ToString();
  }
}

// Issue 10: the data an .npy header declares is held to --max-tensor-bytes before anything is
// allocated or read, and a FIFO or a device is refused rather than read forever.
TEST(Npy, ATensorOverTheLimitIsRefusedFromItsHeader) {
  TempDir dir;
  const std::filesystem::path path = dir / "big.npy";
  // The header alone: a 1 GiB array whose data is not there. The limit is found first.
  testing::WriteAll(path, SerializeNpyHeader(DType::kFloat32, Shape::Of({int64_t{1} << 28})));
  Limits limits;
  limits.max_tensor_bytes = int64_t{1} << 20;
  Result<Tensor> tensor = ReadNpy(path, limits);
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      tensor.status().message(),
      path.string() +
          ": float32[268435456] needs 1.0 GiB, over the limit of 1.0 MiB (--max-tensor-bytes)");
  limits.max_tensor_bytes = int64_t{1} << 30;
  EXPECT_EQ(ReadNpy(path, limits).status().code(), StatusCode::kDataLoss);  // then: truncated
}

TEST(Npy, FifosAndDevicesAreRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "x.npy").c_str(), 0600), 0);
  EXPECT_EQ(ReadNpy(dir / "x.npy").status().message(),
            (dir / "x.npy").string() + " is a FIFO, not a regular file");
  EXPECT_EQ(ReadNpy("/dev/urandom").status().message(),
            "/dev/urandom is a character device, not a regular file");
}

TEST(Npy, AHeaderLongerThanAnyNumpyWritesIsRefused) {
  std::string npy("\x93NUMPY\x02\x00", 8);
  const uint32_t length = (uint32_t{1} << 20) + 1;
  for (int shift = 0; shift < 32; shift += 8) npy.push_back(static_cast<char>(length >> shift));
  npy.append(length, ' ');
  Result<Tensor> tensor = ParseNpy(npy, "long.npy");
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(tensor.status().message().find("long.npy: a header of 1048577 bytes"),
            std::string::npos)
      << tensor.status().message();
}

TEST(Npy, MissingFileIsNotFound) {
  Result<Tensor> tensor = ReadNpy("/nonexistent/convgate/x.npy");
  ASSERT_FALSE(tensor.ok());
  EXPECT_EQ(tensor.status().code(), StatusCode::kNotFound);
  EXPECT_NE(tensor.status().message().find("/nonexistent/convgate/x.npy"), std::string::npos);
}

TEST(Npy, EveryTruncationAndByteFlipFailsCleanly) {
  const std::string npy = SerializeNpy(PatternTensor(DType::kInt16, Shape::Of({2, 3}))).value();
  for (size_t length = 0; length < npy.size(); ++length) {
    Result<Tensor> tensor = ParseNpy(npy.substr(0, length), "prefix");
    ASSERT_FALSE(tensor.ok()) << length;
    EXPECT_NE(tensor.status().message().find("prefix"), std::string::npos);
  }
  // Header bytes replaced one at a time by characters that matter to the parser: any outcome is
  // fine as long as it is a value or a Status.
  const size_t header_end = npy.size() - 12;
  for (size_t pos = 0; pos < header_end; ++pos) {
    for (char c : std::string_view("\0'\"(),:{}[]-9 L\xff", 17)) {
      std::string mutated = npy;
      mutated[pos] = c;
      Result<Tensor> tensor = ParseNpy(mutated, "mutated");
      if (!tensor.ok()) {
        EXPECT_FALSE(tensor.status().message().empty());
      }
    }
  }
}

}  // namespace
}  // namespace convgate::io
