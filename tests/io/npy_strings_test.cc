// numpy string arrays ('U' and 'S' descrs) in .npy and .npz files, read and written by hand; the
// numpy side of the same cases is in numpy_interop_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "io/io_test_util.h"

namespace convgate::io {
namespace {

using testing::TempDir;

std::string MakeNpy(std::string_view descr, std::string_view shape, std::string_view data,
                    bool fortran = false) {
  const std::string dict = "{'descr': '" + std::string(descr) +
                           "', 'fortran_order': " + (fortran ? "True" : "False") +
                           ", 'shape': " + std::string(shape) + ", }\n";
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xFF));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict + std::string(data);
}

// Little- or big-endian UTF-32 of `code_points`, each element padded with NULs to `width`.
std::string Utf32(const std::vector<std::u32string>& elements, size_t width, bool big = false) {
  std::string out;
  for (const std::u32string& element : elements) {
    for (size_t idx = 0; idx < width; ++idx) {
      const char32_t unit = idx < element.size() ? element[idx] : 0;
      for (int byte_idx = 0; byte_idx < 4; ++byte_idx) {
        const int shift = 8 * (big ? 3 - byte_idx : byte_idx);
        out.push_back(static_cast<char>((unit >> shift) & 0xFF));
      }
    }
  }
  return out;
}

std::vector<std::string> StringsOf(const Tensor& tensor) {
  return std::vector<std::string>(tensor.strings().begin(), tensor.strings().end());
}

Tensor MustParse(std::string_view bytes) {
  Result<Tensor> tensor = ParseNpy(bytes, "test.npy");
  EXPECT_TRUE(tensor.ok()) << tensor.status().ToString();
  if (!tensor.ok()) return Tensor();
  EXPECT_EQ(tensor->dtype(), DType::kString);
  return std::move(tensor).value();
}

Tensor Strings(Shape shape, std::vector<std::string> values) {
  return std::move(Tensor::FromStrings(std::move(shape), std::move(values)).value());
}

TEST(NpyStrings, ReadsUnicodeInEveryByteOrder) {
  const std::vector<std::u32string> words = {U"monday", U"K\u00f6ln", U"", U"\U0001F600"};
  const std::vector<std::string> utf8 = {"monday", "K\xC3\xB6ln", "", "\xF0\x9F\x98\x80"};
  for (std::string_view descr : {"<U6", "=U6", "|U6"}) {
    Tensor tensor = MustParse(MakeNpy(descr, "(2, 2)", Utf32(words, 6)));
    EXPECT_EQ(tensor.shape(), Shape::Of({2, 2})) << descr;
    EXPECT_EQ(StringsOf(tensor), utf8) << descr;
  }
  EXPECT_EQ(StringsOf(MustParse(MakeNpy(">U6", "(4,)", Utf32(words, 6, /*big=*/true)))), utf8);
}

TEST(NpyStrings, DropsTrailingNulsOnlyAsNumpyDoes) {
  Tensor unicode = MustParse(MakeNpy("<U3", "(2,)", Utf32({{U'a', 0, U'b'}, {U'c', 0, 0}}, 3)));
  EXPECT_EQ(StringsOf(unicode), (std::vector<std::string>{std::string("a\0b", 3), "c"}));
  Tensor bytes = MustParse(MakeNpy("|S3", "(3,)", std::string("a\0b\xff\0\0\0\0\0", 9)));
  EXPECT_EQ(StringsOf(bytes), (std::vector<std::string>{std::string("a\0b", 3), "\xff", ""}));
}

TEST(NpyStrings, ReadsFortranOrder) {
  // [["a", "bb", "ccc"], ["d", "e", "f"]] stored column by column.
  const std::string data = Utf32({U"a", U"d", U"bb", U"e", U"ccc", U"f"}, 3);
  Tensor tensor = MustParse(MakeNpy("<U3", "(2, 3)", data, /*fortran=*/true));
  EXPECT_EQ(StringsOf(tensor), (std::vector<std::string>{"a", "bb", "ccc", "d", "e", "f"}));
}

TEST(NpyStrings, WritesNumpysUnicodeLayout) {
  Result<std::string> npy = SerializeNpy(Strings(Shape::Of({3}), {"ab", "K\xC3\xB6ln", ""}));
  ASSERT_TRUE(npy.ok()) << npy.status().ToString();
  EXPECT_NE(npy->find("{'descr': '<U4', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_TRUE(npy->ends_with(Utf32({U"ab", U"K\u00f6ln", U""}, 4)));
  // np.array(['']) and np.array([], dtype=str) are both '<U1'.
  for (const Shape& shape : {Shape::Of({2}), Shape::Of({0})}) {
    Tensor empty = std::move(Tensor::Allocate(DType::kString, shape).value());
    Result<NpyParts> parts = SerializeNpyParts(empty);
    ASSERT_TRUE(parts.ok());
    EXPECT_NE(parts->header.find("'descr': '<U1'"), std::string::npos);
    EXPECT_EQ(parts->string_data, std::string(4 * shape.NumElements(), '\0'));
  }
}

TEST(NpyStrings, RoundTrips) {
  const std::vector<Tensor> tensors = [] {
    std::vector<Tensor> out;
    out.push_back(Strings(Shape(), {"scalar"}));
    out.push_back(Strings(Shape::Of({0, 3}), {}));
    out.push_back(
        Strings(Shape::Of({2, 2}), {"", "\xF0\x9F\x98\x80", "x y", std::string(300, 'z')}));
    out.push_back(Strings(Shape::Of({1}), {std::string("nul\0inside", 10)}));
    return out;
  }();
  for (const Tensor& tensor : tensors) {
    Result<std::string> npy = SerializeNpy(tensor);
    ASSERT_TRUE(npy.ok()) << tensor.Describe();
    Result<Tensor> back = ParseNpy(*npy, "round trip");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(back->BitwiseEquals(tensor)) << tensor.Describe();
  }
}

TEST(NpyStrings, RefusesToWriteBytesThatAreNotUtf8) {
  TempDir dir;
  Tensor tensor = Strings(Shape::Of({2, 2}), {"ok", "fine", "also", "bad\xff"});
  Status npy = WriteNpy(dir / "s.npy", tensor);
  EXPECT_EQ(npy.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(npy.message(), "cannot write " + (dir / "s.npy").string() +
                               ": element [1, 1]: not valid UTF-8 (byte 0xff at offset 3), which "
                               "a numpy str array cannot hold");
  EXPECT_FALSE(std::filesystem::exists(dir / "s.npy"));
  TensorMap members;
  ASSERT_TRUE(members.Insert("words", std::move(tensor)).ok());
  Status npz = WriteNpz(dir / "s.npz", members);
  EXPECT_EQ(npz.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(npz.message().find("s.npz: member 'words': element [1, 1]"), std::string::npos)
      << npz.ToString();
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(NpyStrings, NpzHoldsStringsBesideNumbers) {
  TempDir dir;
  TensorMap members;
  ASSERT_TRUE(members.Insert("short", Strings(Shape::Of({1}), {"a"})).ok());
  ASSERT_TRUE(
      members.Insert("x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), {1, 2})).ok());
  ASSERT_TRUE(members.Insert("words", Strings(Shape::Of({2}), {"monday", "MONDAY"})).ok());
  for (bool compress : {false, true}) {
    ASSERT_TRUE(WriteNpz(dir / "m.npz", members, {.compress = compress}).ok());
    Result<TensorMap> back = ReadNpz(dir / "m.npz");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ASSERT_EQ(back->Names(), members.Names());
    for (size_t idx = 0; idx < members.size(); ++idx) {
      EXPECT_TRUE((*back)[idx].tensor.BitwiseEquals(members[idx].tensor)) << members[idx].name;
    }
  }
}

}  // namespace
}  // namespace convgate::io
