#include "convgate/io/test_case.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

#include "convgate/io/tensor_proto.h"

namespace convgate::io {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDataSetPrefix = "test_data_set_";
constexpr std::string_view kInputPrefix = "input_";
constexpr std::string_view kOutputPrefix = "output_";
constexpr std::string_view kPbSuffix = ".pb";

std::string_view PrefixOf(TestCasePart part) {
  return part == TestCasePart::kInputs ? kInputPrefix : kOutputPrefix;
}

struct NumberedPath {
  uint64_t number = 0;
  fs::path path;
};

// N for names spelled "<prefix>N<suffix>" with N all decimal digits; nullopt otherwise.
std::optional<uint64_t> NumberIn(std::string_view name, std::string_view prefix,
                                 std::string_view suffix) {
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
      !name.ends_with(suffix)) {
    return std::nullopt;
  }
  const std::string_view digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  uint64_t number = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return number;
}

// "a/b/" -> "a/b", so that filename() names the last folder.
fs::path WithoutTrailingSlash(const fs::path& path) {
  fs::path normal = path.lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

bool IsDataSetDir(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) &&
         NumberIn(WithoutTrailingSlash(path).filename().string(), kDataSetPrefix, "").has_value();
}

// Entries of `dir` named "<prefix>N<suffix>", sorted by N (so test_data_set_10 follows _9).
Result<std::vector<NumberedPath>> ListNumbered(const fs::path& dir, std::string_view prefix,
                                               std::string_view suffix, bool directories) {
  std::vector<NumberedPath> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) != directories) continue;
    std::optional<uint64_t> number = NumberIn(it->path().filename().string(), prefix, suffix);
    if (number) found.push_back({*number, it->path()});
  }
  if (ec) {
    return Status(ec == std::errc::no_such_file_or_directory ? StatusCode::kNotFound
                                                             : StatusCode::kUnavailable,
                  "cannot list " + dir.string() + ": " + ec.message());
  }
  std::sort(found.begin(), found.end(),
            [](const NumberedPath& a, const NumberedPath& b) { return a.number < b.number; });
  return found;
}

Result<std::vector<fs::path>> DataSetDirs(const fs::path& path) {
  if (IsDataSetDir(path)) return std::vector<fs::path>{path};
  CONVGATE_ASSIGN_OR_RETURN(std::vector<NumberedPath> sets,
                            ListNumbered(path, kDataSetPrefix, "", /*directories=*/true));
  if (sets.empty()) {
    return Status::NotFound("no test_data_set_N folder in " + path.string());
  }
  std::vector<fs::path> dirs;
  for (NumberedPath& set : sets) dirs.push_back(std::move(set.path));
  return dirs;
}

// The prefixN.pb files of a data set, which must be numbered 0..K-1 without gaps: names are given
// by position, so a missing file would silently shift every later name.
Result<std::vector<NumberedPath>> PbFiles(const fs::path& dir, std::string_view prefix) {
  CONVGATE_ASSIGN_OR_RETURN(std::vector<NumberedPath> files,
                            ListNumbered(dir, prefix, kPbSuffix, /*directories=*/false));
  for (size_t file_idx = 0; file_idx < files.size(); ++file_idx) {
    if (files[file_idx].number != file_idx) {
      return Status::DataLoss(files[file_idx].path.string() + ": there is no " +
                              std::string(prefix) + std::to_string(file_idx) + ".pb before it");
    }
  }
  return files;
}

Result<TensorMap> ReadTensors(const std::vector<NumberedPath>& files,
                              const std::vector<std::string>& names, std::string_view prefix,
                              const Limits& limits) {
  TensorMap tensors;
  for (size_t file_idx = 0; file_idx < files.size(); ++file_idx) {
    CONVGATE_ASSIGN_OR_RETURN(NamedTensorProto proto,
                              ReadTensorProto(files[file_idx].path, limits));
    std::string name = file_idx < names.size() ? names[file_idx] : "";
    if (name.empty()) name = proto.name;
    if (name.empty()) name = std::string(prefix) + std::to_string(file_idx);
    if (tensors.Contains(name)) {
      return Status::DataLoss(files[file_idx].path.string() + ": tensor name '" + name +
                              "' is already used by an earlier file");
    }
    CONVGATE_RETURN_IF_ERROR(tensors.Insert(std::move(name), std::move(proto.tensor)));
  }
  return tensors;
}

Result<TestDataSet> ReadDataSet(const fs::path& dir, const TestCaseNames& names, bool load_outputs,
                                const Limits& limits) {
  CONVGATE_ASSIGN_OR_RETURN(std::vector<NumberedPath> inputs, PbFiles(dir, kInputPrefix));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<NumberedPath> outputs, PbFiles(dir, kOutputPrefix));
  if (inputs.empty() && outputs.empty()) {
    return Status::DataLoss(dir.string() + ": no input_K.pb or output_K.pb files");
  }
  TestDataSet data_set;
  data_set.dir = dir;
  CONVGATE_ASSIGN_OR_RETURN(data_set.inputs,
                            ReadTensors(inputs, names.inputs, kInputPrefix, limits));
  if (load_outputs) {
    CONVGATE_ASSIGN_OR_RETURN(data_set.outputs,
                              ReadTensors(outputs, names.outputs, kOutputPrefix, limits));
  }
  return data_set;
}

// Writes prefixK.pb for every tensor and deletes stale prefixK.pb files with larger K left by an
// earlier, bigger data set, which a reader would otherwise pick up.
Status WriteTensors(const fs::path& dir, std::string_view prefix, const TensorMap& tensors) {
  CONVGATE_ASSIGN_OR_RETURN(std::vector<NumberedPath> existing,
                            ListNumbered(dir, prefix, kPbSuffix, /*directories=*/false));
  for (const NumberedPath& file : existing) {
    std::error_code ec;
    if (file.number >= tensors.size() && !fs::remove(file.path, ec) && ec) {
      return Status::Unavailable("cannot remove stale " + file.path.string() + ": " + ec.message());
    }
  }
  for (size_t tensor_idx = 0; tensor_idx < tensors.size(); ++tensor_idx) {
    const fs::path file = dir / (std::string(prefix) + std::to_string(tensor_idx) + ".pb");
    CONVGATE_RETURN_IF_ERROR(
        WriteTensorProto(file, tensors[tensor_idx].tensor, tensors[tensor_idx].name));
  }
  return Status::OK();
}

}  // namespace

bool IsTestDataSetDir(const fs::path& path) { return IsDataSetDir(path); }

bool IsTestCasePath(const fs::path& path) {
  if (IsDataSetDir(path)) return true;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return false;
  Result<std::vector<NumberedPath>> sets =
      ListNumbered(path, kDataSetPrefix, "", /*directories=*/true);
  return sets.ok() && !sets->empty();
}

Result<std::vector<TestDataSet>> ReadTestCase(const fs::path& path, const TestCaseNames& names,
                                              bool load_outputs, const Limits& limits) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound("no such test case folder: " + path.string());
  if (!fs::is_directory(path, ec)) {
    return Status::InvalidArgument(path.string() + " is not a test case folder");
  }
  CONVGATE_ASSIGN_OR_RETURN(std::vector<fs::path> dirs, DataSetDirs(path));
  std::vector<TestDataSet> data_sets;
  for (const fs::path& dir : dirs) {
    CONVGATE_ASSIGN_OR_RETURN(TestDataSet data_set, ReadDataSet(dir, names, load_outputs, limits));
    data_sets.push_back(std::move(data_set));
  }
  return data_sets;
}

Status WriteTestDataSet(const fs::path& case_dir, int index, const TensorMap& inputs,
                        const TensorMap& outputs) {
  CONVGATE_RETURN_IF_ERROR(WriteTestDataSetPart(case_dir, index, TestCasePart::kInputs, inputs));
  return WriteTestDataSetPart(case_dir, index, TestCasePart::kOutputs, outputs);
}

Status WriteTestDataSetPart(const fs::path& case_dir, int index, TestCasePart part,
                            const TensorMap& tensors) {
  if (index < 0) {
    return Status::InvalidArgument("test data set index " + std::to_string(index) + " is negative");
  }
  const fs::path dir = case_dir / (std::string(kDataSetPrefix) + std::to_string(index));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Unavailable("cannot create " + dir.string() + ": " + ec.message());
  return WriteTensors(dir, PrefixOf(part), tensors);
}

bool TestCaseHolds(const fs::path& case_dir, TestCasePart part) {
  if (!IsTestCasePath(case_dir)) return false;
  Result<std::vector<fs::path>> dirs = DataSetDirs(case_dir);
  if (!dirs.ok()) return false;
  for (const fs::path& dir : *dirs) {
    Result<std::vector<NumberedPath>> files =
        ListNumbered(dir, PrefixOf(part), kPbSuffix, /*directories=*/false);
    if (files.ok() && !files->empty()) return true;
  }
  return false;
}

fs::path TestCaseModelPath(const fs::path& path) {
  const fs::path dir = WithoutTrailingSlash(path);
  const fs::path model = (IsDataSetDir(dir) ? dir.parent_path() : dir) / "model.onnx";
  std::error_code ec;
  return fs::is_regular_file(model, ec) ? model : fs::path();
}

}  // namespace convgate::io
