// LoadDataset and SaveDataset: the file layouts a dataset can live in (see dataset.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "convgate/inputs/dataset.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/safetensors.h"
#include "convgate/io/test_case.h"

namespace convgate::inputs {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSamplePrefix = "sample_";
constexpr std::string_view kDataSetPrefix = "test_data_set_";

std::string Quote(const fs::path& path) { return "'" + path.string() + "'"; }

std::string LowerExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// A multi-sample npz member name "sample_<i>/<input>".
struct SampleKey {
  uint64_t index;
  std::string input;
};

// nullopt unless `name` starts with "sample_", digits and '/'. An index too large for uint64
// becomes UINT64_MAX, which the contiguity check then reports as a gap.
std::optional<SampleKey> ParseSampleKey(std::string_view name) {
  if (!name.starts_with(kSamplePrefix)) return std::nullopt;
  const std::string_view rest = name.substr(kSamplePrefix.size());
  const size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
  const std::string_view digits = rest.substr(0, slash);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  uint64_t index = 0;
  if (std::from_chars(digits.data(), digits.data() + digits.size(), index).ec != std::errc()) {
    index = UINT64_MAX;
  }
  return SampleKey{index, std::string(rest.substr(slash + 1))};
}

bool IsMultiSample(const TensorMap& members) {
  if (members.empty()) return false;
  return std::all_of(members.begin(), members.end(), [](const TensorMap::Entry& entry) {
    return ParseSampleKey(entry.name).has_value();
  });
}

Status SplitSamples(const fs::path& path, TensorMap members, std::vector<TensorMap>& samples) {
  std::map<uint64_t, TensorMap> by_index;
  for (TensorMap::Entry& entry : members) {
    const SampleKey key = *ParseSampleKey(entry.name);
    if (key.input.empty()) {
      return Status::DataLoss(path.string() + ": member '" + entry.name + "' names no input");
    }
    Status inserted = by_index[key.index].Insert(key.input, std::move(entry.tensor));
    if (!inserted.ok()) return Status::DataLoss(path.string() + ": " + inserted.message());
  }
  uint64_t expected = 0;
  for (auto& [index, sample] : by_index) {
    if (index != expected) {
      return Status::DataLoss(path.string() + ": has no sample_" + std::to_string(expected) +
                              "/ members but has sample_" + std::to_string(index) +
                              "/ (samples must be numbered from 0 without gaps)");
    }
    samples.push_back(std::move(sample));
    ++expected;
  }
  return Status::OK();
}

// An .npz or a .safetensors: named tensors, one sample flat or many as sample_<i>/<name>.
Status LoadNamedTensors(const fs::path& path, TensorMap members, Dataset& dataset) {
  if (!IsMultiSample(members)) {
    dataset.samples.push_back(std::move(members));
    return Status::OK();
  }
  return SplitSamples(path, std::move(members), dataset.samples);
}

Status LoadNpz(const fs::path& path, const Limits& limits, Dataset& dataset) {
  CONVGATE_ASSIGN_OR_RETURN(TensorMap members, io::ReadNpz(path, limits));
  return LoadNamedTensors(path, std::move(members), dataset);
}

Status LoadSafetensors(const fs::path& path, const Limits& limits, Dataset& dataset) {
  CONVGATE_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(path, limits));
  return LoadNamedTensors(path, std::move(file.tensors), dataset);
}

Status LoadSingleNpy(const fs::path& path, const Signature& signature, const Limits& limits,
                     Dataset& dataset) {
  if (signature.inputs.size() != 1) {
    return Status::InvalidArgument(path.string() + " holds one tensor but the model has " +
                                   std::to_string(signature.inputs.size()) +
                                   " inputs; use an .npz");
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, io::ReadNpy(path, limits));
  TensorMap sample;
  sample.InsertOrAssign(signature.inputs[0].name, std::move(tensor));
  dataset.samples.push_back(std::move(sample));
  return Status::OK();
}

// Every *.npy in the folder, in file name order; the tensor is named by the file's stem.
Status LoadNpyFolder(const fs::path& dir, const Limits& limits, Dataset& dataset) {
  std::error_code error;
  std::vector<fs::path> files;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file() && LowerExtension(it->path()) == ".npy") files.push_back(it->path());
  }
  if (error) return Status::NotFound("cannot list folder " + Quote(dir) + ": " + error.message());
  if (files.empty()) {
    return Status::InvalidArgument("folder " + Quote(dir) +
                                   " holds neither .npy files nor ONNX test data sets "
                                   "(test_data_set_N folders)");
  }
  std::sort(files.begin(), files.end());
  TensorMap sample;
  for (const fs::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, io::ReadNpy(file, limits));
    sample.InsertOrAssign(file.stem().string(), std::move(tensor));
  }
  dataset.samples.push_back(std::move(sample));
  return Status::OK();
}

Status LoadTestCase(const fs::path& path, const Signature& signature, const Limits& limits,
                    Dataset& dataset) {
  io::TestCaseNames names;
  for (const TensorInfo& info : signature.inputs) names.inputs.push_back(info.name);
  CONVGATE_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> data_sets,
                            io::ReadTestCase(path, names, /*load_outputs=*/false, limits));
  for (io::TestDataSet& data_set : data_sets) dataset.samples.push_back(std::move(data_set.inputs));
  return Status::OK();
}

// A single sample is written flat unless every name would read back as a "sample_<i>/" key.
bool NeedsSampleKeys(const Dataset& dataset) {
  return dataset.samples.size() > 1 || IsMultiSample(dataset.samples[0]);
}

// An .npz or a .safetensors (`write`): one sample flat, many as sample_<i>/<name>.
template <typename Write>
Status SaveNamedTensors(const fs::path& path, const Dataset& dataset, Write write) {
  if (!NeedsSampleKeys(dataset)) return write(path, dataset.samples[0]);
  // The writers take one TensorMap, so the multi-sample layout needs a renamed copy of every
  // tensor.
  TensorMap members;
  for (size_t sample_idx = 0; sample_idx < dataset.samples.size(); ++sample_idx) {
    const std::string prefix = std::string(kSamplePrefix) + std::to_string(sample_idx) + "/";
    for (const TensorMap::Entry& entry : dataset.samples[sample_idx]) {
      CONVGATE_RETURN_IF_ERROR(members.Insert(prefix + entry.name, entry.tensor.Clone()));
    }
  }
  return write(path, members);
}

Status SaveNpz(const fs::path& path, const Dataset& dataset) {
  return SaveNamedTensors(path, dataset, [](const fs::path& file, const TensorMap& tensors) {
    return io::WriteNpz(file, tensors);
  });
}

Status SaveSafetensors(const fs::path& path, const Dataset& dataset) {
  return SaveNamedTensors(path, dataset, [](const fs::path& file, const TensorMap& tensors) {
    return io::WriteSafetensors(file, tensors);
  });
}

// What is being saved: inputs (input_K.pb files in a test case) or outputs (output_K.pb), and the
// declared tensors whose order the K follow.
struct SavedPart {
  io::TestCasePart part;
  std::string_view noun;  // "input" or "output"
  const std::vector<TensorInfo>& order;
};

std::string FilePattern(const SavedPart& what) { return std::string(what.noun) + "_K.pb"; }

// Data sets left over from an earlier, larger save would be read back as extra samples.
Status CheckNoStaleDataSets(const fs::path& dir, size_t sample_count) {
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!it->is_directory() || !name.starts_with(kDataSetPrefix)) continue;
    const std::string_view digits = std::string_view(name).substr(kDataSetPrefix.size());
    uint64_t index = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || index < sample_count) continue;
    return Status::FailedPrecondition("cannot save " + std::to_string(sample_count) +
                                      " samples into " + Quote(dir) + ": it already holds " + name +
                                      ", which would be read back as an extra sample");
  }
  if (error) return Status::NotFound("cannot list folder " + Quote(dir) + ": " + error.message());
  return Status::OK();
}

const TensorMap::Entry* FindEntry(const TensorMap& sample, const std::string& name) {
  auto it = std::find_if(sample.begin(), sample.end(),
                         [&](const TensorMap::Entry& entry) { return entry.name == name; });
  return it == sample.end() ? nullptr : &*it;
}

// input_K.pb / output_K.pb files are matched to names by position, so the declared tensors come
// first in declaration order, then any other tensors of the sample. Copies only when the order
// differs.
Status WriteDataSet(const fs::path& dir, size_t sample_idx, const TensorMap& sample,
                    const SavedPart& what) {
  std::vector<const TensorMap::Entry*> ordered;
  for (const TensorInfo& info : what.order) {
    const TensorMap::Entry* entry = FindEntry(sample, info.name);
    if (entry == nullptr) {
      return Status::FailedPrecondition("cannot save sample " + std::to_string(sample_idx) +
                                        " as an ONNX test case: it has no " +
                                        std::string(what.noun) + " '" + info.name + "', and " +
                                        FilePattern(what) + " files are matched by position");
    }
    ordered.push_back(entry);
  }
  for (const TensorMap::Entry& entry : sample) {
    if (std::find(ordered.begin(), ordered.end(), &entry) == ordered.end()) {
      ordered.push_back(&entry);
    }
  }
  const int index = static_cast<int>(sample_idx);
  bool in_order = true;
  for (size_t pos = 0; pos < ordered.size(); ++pos) in_order &= ordered[pos] == &sample[pos];
  if (in_order) return io::WriteTestDataSetPart(dir, index, what.part, sample);
  TensorMap reordered;
  for (const TensorMap::Entry* entry : ordered) {
    reordered.InsertOrAssign(entry->name, entry->tensor.Clone());
  }
  return io::WriteTestDataSetPart(dir, index, what.part, reordered);
}

// Writes only `what`'s files: inputs and outputs saved to one folder end up side by side.
Status SaveTestCase(const fs::path& dir, const Dataset& dataset, const SavedPart& what) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return Status::NotFound("cannot create folder " + Quote(dir) + ": " + error.message());
  CONVGATE_RETURN_IF_ERROR(CheckNoStaleDataSets(dir, dataset.samples.size()));
  for (size_t sample_idx = 0; sample_idx < dataset.samples.size(); ++sample_idx) {
    CONVGATE_RETURN_IF_ERROR(WriteDataSet(dir, sample_idx, dataset.samples[sample_idx], what));
  }
  return Status::OK();
}

Status Save(const fs::path& path, const Dataset& dataset, const SavedPart& what) {
  const std::string noun = std::string(what.noun) + "s";
  if (dataset.samples.empty()) {
    return Status::FailedPrecondition("cannot save " + noun + " to " + Quote(path) +
                                      ": there are no samples");
  }
  const std::string ext = LowerExtension(path);
  if (ext == ".npz") return SaveNpz(path, dataset);
  if (ext == ".safetensors") return SaveSafetensors(path, dataset);
  if (ext == ".npy") {
    return Status::InvalidArgument("cannot save " + noun + " as " + Quote(path) +
                                   ": use an .npz file, or a folder for the ONNX test case layout");
  }
  return SaveTestCase(path, dataset, what);
}

}  // namespace

Result<Dataset> LoadDataset(const fs::path& path, const Signature& signature,
                            const Limits& limits) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) {
    if (error && error != std::errc::no_such_file_or_directory) {
      return Status::NotFound("cannot access inputs " + Quote(path) + ": " + error.message());
    }
    return Status::NotFound("inputs " + Quote(path) + " do not exist");
  }
  Dataset dataset;
  dataset.origin = path.string();
  if (fs::is_directory(status)) {
    if (io::IsTestCasePath(path)) {
      CONVGATE_RETURN_IF_ERROR(LoadTestCase(path, signature, limits, dataset));
    } else {
      CONVGATE_RETURN_IF_ERROR(LoadNpyFolder(path, limits, dataset));
    }
    return dataset;
  }
  const std::string ext = LowerExtension(path);
  if (ext == ".npz") {
    CONVGATE_RETURN_IF_ERROR(LoadNpz(path, limits, dataset));
  } else if (ext == ".safetensors") {
    CONVGATE_RETURN_IF_ERROR(LoadSafetensors(path, limits, dataset));
  } else if (ext == ".npy") {
    CONVGATE_RETURN_IF_ERROR(LoadSingleNpy(path, signature, limits, dataset));
  } else {
    return Status::InvalidArgument("cannot load inputs from " + Quote(path) +
                                   ": expected an .npz, a .safetensors, an .npy, a folder of .npy "
                                   "files or an ONNX test case folder");
  }
  return dataset;
}

Status SaveDataset(const fs::path& path, const Dataset& dataset, const Signature& signature) {
  return Save(path, dataset, SavedPart{io::TestCasePart::kInputs, "input", signature.inputs});
}

Status SaveOutputs(const fs::path& path, const Dataset& outputs,
                   const std::vector<TensorInfo>& declared) {
  return Save(path, outputs, SavedPart{io::TestCasePart::kOutputs, "output", declared});
}

}  // namespace convgate::inputs
