// Files written by numpy read back identically here, and files written here read back identically
// in numpy. The numpy side is tests/io/numpy_interop.py, run with Debian's /usr/bin/python3.
#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "io/io_test_util.h"

namespace convgate::io {
namespace {

namespace fs = std::filesystem;
using testing::Hex;
using testing::PatternTensor;
using testing::Split;
using testing::TempDir;

const std::string kScript = std::string(CONVGATE_SOURCE_DIR) + "/tests/io/numpy_interop.py";

// One line of numpy_interop.py output: file, npz key, dtype, dims, hex of little-endian C bytes.
struct ArrayLine {
  std::string file;
  std::string key;
  std::string dtype;
  std::string dims;
  std::string hex;
};

std::vector<ArrayLine> ParseLines(const std::string& text) {
  std::vector<ArrayLine> lines;
  for (const std::string& line : Split(text, '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> fields = Split(line, '\t');
    EXPECT_EQ(fields.size(), 5u) << line;
    if (fields.size() != 5) continue;
    lines.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return lines;
}

std::string DimsText(const Shape& shape) {
  std::string text;
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    text += (axis > 0 ? "," : "") + std::to_string(shape.dim(axis));
  }
  return text;
}

// numpy_interop.py's "hex" column: the bytes, or for strings each element's bytes joined by ",".
std::string DataHex(const Tensor& tensor) {
  if (tensor.dtype() != DType::kString) return Hex(tensor.bytes());
  std::string hex;
  for (size_t idx = 0; idx < tensor.strings().size(); ++idx) {
    hex += (idx > 0 ? "," : "") + Hex(std::as_bytes(std::span<const char>(tensor.strings()[idx])));
  }
  return hex;
}

void ExpectMatches(const Tensor& tensor, const ArrayLine& line) {
  const std::string label = line.file + " " + line.key;
  EXPECT_EQ(DTypeName(tensor.dtype()), line.dtype) << label;
  EXPECT_EQ(DimsText(tensor.shape()), line.dims) << label;
  EXPECT_EQ(DataHex(tensor), line.hex) << label;
}

Tensor Strings(Shape shape, std::vector<std::string> values) {
  return std::move(Tensor::FromStrings(std::move(shape), std::move(values)).value());
}

std::pair<int, std::string> RunScript(const std::string& args) {
  return testing::RunCommand(std::string(testing::kPython) + " " + kScript + " " + args + " 2>&1");
}

// The files numpy writes, made once for the whole suite (python startup dominates the run time).
struct NumpyFiles {
  NumpyFiles() { std::tie(rc, output) = RunScript("write " + dir.path().string()); }
  TempDir dir;
  int rc = -1;
  std::string output;
};

class NumpyInterop : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::PythonHasNumpy()) GTEST_SKIP() << testing::kPython << " has no numpy";
  }
  static const NumpyFiles& Written() {
    static const NumpyFiles files;
    return files;
  }
  TempDir dir_;
};

TEST_F(NumpyInterop, WeReadWhatNumpyWrites) {
  ASSERT_EQ(Written().rc, 0) << Written().output;
  const TempDir& numpy_dir = Written().dir;
  const std::vector<ArrayLine> expected = ParseLines(testing::ReadAll(numpy_dir / "expected.tsv"));
  ASSERT_GT(expected.size(), 40u);
  std::map<std::string, TensorMap> archives;
  for (const ArrayLine& line : expected) {
    const fs::path path = numpy_dir / line.file;
    if (path.extension() != ".npz") {
      Result<Tensor> tensor = ReadNpy(path);
      ASSERT_TRUE(tensor.ok()) << tensor.status().ToString();
      ExpectMatches(*tensor, line);
      continue;
    }
    if (!archives.contains(line.file)) {
      Result<TensorMap> tensors = ReadNpz(path);
      ASSERT_TRUE(tensors.ok()) << tensors.status().ToString();
      archives.emplace(line.file, std::move(tensors).value());
    }
    const Tensor* tensor = archives[line.file].Find(line.key);
    ASSERT_NE(tensor, nullptr) << line.file << " has no '" << line.key << "'";
    ExpectMatches(*tensor, line);
    // np.savez's zip64 headers are parsed: its numeric members are read where they lie.
    if (line.file == "stored.npz" && tensor->dtype() != DType::kString && tensor->byte_size() > 0) {
      EXPECT_TRUE(testing::InMappingOf(tensor->bytes().data(), path)) << line.key;
    }
  }
  // Member order is numpy's (archive) order.
  EXPECT_EQ(archives["stored.npz"].Names(),
            (std::vector<std::string>{"x", "scope/a/b", "out:0", "empty", "f16", "words"}));
  Result<TensorMap> none = ReadNpz(numpy_dir / "no_arrays.npz");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
}

TEST_F(NumpyInterop, WeRefuseWhatWeCannotHold) {
  ASSERT_EQ(Written().rc, 0) << Written().output;
  const TempDir& numpy_dir = Written().dir;
  for (const std::string& line : Split(testing::ReadAll(numpy_dir / "unsupported.tsv"), '\n')) {
    if (line.empty()) continue;
    std::vector<std::string> fields = Split(line, '\t');
    ASSERT_EQ(fields.size(), 2u);
    Result<Tensor> tensor = ReadNpy(numpy_dir / fields[0]);
    ASSERT_FALSE(tensor.ok()) << fields[0];
    EXPECT_EQ(StatusCodeName(tensor.status().code()), fields[1]) << tensor.status().ToString();
    EXPECT_NE(tensor.status().message().find(fields[0]), std::string::npos);
  }
}

TEST_F(NumpyInterop, NumpyReadsWhatWeWrite) {
  std::vector<std::pair<std::string, Tensor>> written;
  std::vector<Shape> shapes = {Shape::Of({2, 3}), Shape(), Shape::Of({0}), Shape::Of({4, 0, 2})};
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes) {
    for (size_t shape_idx = 0; shape_idx < shapes.size(); ++shape_idx) {
      const std::string file =
          std::string(DTypeName(dtype)) + "_" + std::to_string(shape_idx) + ".npy";
      written.emplace_back(file, PatternTensor(dtype, shapes[shape_idx], seed++));
      ASSERT_TRUE(WriteNpy(dir_ / file, written.back().second).ok());
    }
  }
  written.emplace_back("words.npy", Strings(Shape::Of({2, 2}), {"monday", "K\xC3\xB6ln", "",
                                                                "\xF0\x9F\x98\x80 tab\t"}));
  written.emplace_back("word.npy", Strings(Shape(), {"x"}));
  written.emplace_back("no_words.npy", Strings(Shape::Of({0}), {}));
  written.emplace_back("blanks.npy", Strings(Shape::Of({2}), {"", ""}));
  for (size_t idx = written.size() - 4; idx < written.size(); ++idx) {
    ASSERT_TRUE(WriteNpy(dir_ / written[idx].first, written[idx].second).ok());
  }
  TensorMap members;
  ASSERT_TRUE(members.Insert("x", PatternTensor(DType::kFloat32, Shape::Of({3}), 90)).ok());
  ASSERT_TRUE(
      members.Insert("scope/a:0", PatternTensor(DType::kInt64, Shape::Of({2, 2}), 91)).ok());
  ASSERT_TRUE(members.Insert("flag", PatternTensor(DType::kBool, Shape(), 92)).ok());
  ASSERT_TRUE(members.Insert("bf", PatternTensor(DType::kBFloat16, Shape::Of({5}), 93)).ok());
  ASSERT_TRUE(members.Insert("say", Strings(Shape::Of({3}), {"a", "", "bc"})).ok());
  ASSERT_TRUE(WriteNpz(dir_ / "stored.npz", members).ok());
  ASSERT_TRUE(WriteNpz(dir_ / "deflated.npz", members, {.compress = true}).ok());

  std::string args = "read";
  for (const auto& [file, tensor] : written) args += " " + (dir_ / file).string();
  args += " " + (dir_ / "stored.npz").string() + " " + (dir_ / "deflated.npz").string();
  auto [rc, out] = RunScript(args);
  ASSERT_EQ(rc, 0) << out;
  const std::vector<ArrayLine> lines = ParseLines(out);
  ASSERT_EQ(lines.size(), written.size() + 2 * members.size());
  for (size_t idx = 0; idx < written.size(); ++idx) {
    ExpectMatches(written[idx].second, lines[idx]);
  }
  for (size_t idx = 0; idx < 2 * members.size(); ++idx) {
    const TensorMap::Entry& member = members[idx % members.size()];
    const ArrayLine& line = lines[written.size() + idx];
    EXPECT_EQ(line.key, member.name);
    ExpectMatches(member.tensor, line);
  }
}

}  // namespace
}  // namespace convgate::io
