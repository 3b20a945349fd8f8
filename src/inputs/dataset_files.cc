// LoadDataset and SaveDataset: the file layouts a dataset can live in (see dataset.h).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "convgate/core/scratch_file.h"
#include "convgate/core/temp_dir.h"
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

// What is being saved: inputs (input_K.pb files in a test case) or outputs (output_K.pb), and the
// declared tensors whose order the K follow.
struct SavedPart {
  io::TestCasePart part;
  std::string_view noun;  // "input" or "output"
  std::vector<TensorInfo> order;
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

// The layouts a data set is written in, one sample at a time: a test case's data sets as they
// come; an .npz's members as .npy files in a private folder, archived by Finish (each read from its
// file then); a .safetensors held until Finish, since its header, written first, lists every
// tensor.
struct DatasetWriter::State {
  enum class Layout { kTestCase, kNpz, kSafetensors };
  fs::path path;
  SavedPart what;
  Layout layout = Layout::kTestCase;
  size_t expected = 0;
  size_t added = 0;
  bool flat = false;  // an .npz or .safetensors of one sample, its names as they are
  std::optional<TempDir> scratch;
  std::vector<io::NpzMemberFile> members;
  TensorMap held;  // .safetensors: every member, named as written
};

DatasetWriter::DatasetWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
DatasetWriter::DatasetWriter(DatasetWriter&&) noexcept = default;
DatasetWriter& DatasetWriter::operator=(DatasetWriter&&) noexcept = default;
DatasetWriter::~DatasetWriter() = default;

const fs::path& DatasetWriter::path() const { return state_->path; }

Result<DatasetWriter> DatasetWriter::Open(const fs::path& path, size_t samples, bool outputs,
                                          std::vector<TensorInfo> order) {
  SavedPart what = outputs ? SavedPart{io::TestCasePart::kOutputs, "output", std::move(order)}
                           : SavedPart{io::TestCasePart::kInputs, "input", std::move(order)};
  const std::string noun = std::string(what.noun) + "s";
  if (samples == 0) {
    return Status::FailedPrecondition("cannot save " + noun + " to " + Quote(path) +
                                      ": there are no samples");
  }
  auto state = std::make_unique<State>();
  state->path = path;
  state->what = std::move(what);
  state->expected = samples;
  const std::string ext = LowerExtension(path);
  if (ext == ".npy") {
    return Status::InvalidArgument("cannot save " + noun + " as " + Quote(path) +
                                   ": use an .npz file, or a folder for the ONNX test case layout");
  }
  if (ext == ".npz") {
    state->layout = State::Layout::kNpz;
    CONVGATE_ASSIGN_OR_RETURN(TempDir scratch, TempDir::Create("save"));
    state->scratch = std::move(scratch);
  } else if (ext == ".safetensors") {
    state->layout = State::Layout::kSafetensors;
  } else {
    std::error_code error;
    fs::create_directories(path, error);
    if (error) {
      return Status::NotFound("cannot create folder " + Quote(path) + ": " + error.message());
    }
    CONVGATE_RETURN_IF_ERROR(CheckNoStaleDataSets(path, samples));
  }
  return DatasetWriter(std::move(state));
}

Result<DatasetWriter> DatasetWriter::ForInputs(const fs::path& path, size_t samples,
                                               const Signature& signature) {
  return Open(path, samples, /*outputs=*/false, signature.inputs);
}

Result<DatasetWriter> DatasetWriter::ForOutputs(const fs::path& path, size_t samples,
                                                const std::vector<TensorInfo>& declared) {
  return Open(path, samples, /*outputs=*/true, declared);
}

Status DatasetWriter::Add(const TensorMap& sample) {
  State& state = *state_;
  const size_t index = state.added;
  if (index >= state.expected) {
    return Status::Internal("more samples saved to " + Quote(state.path) + " than announced");
  }
  if (state.layout == State::Layout::kTestCase) {
    CONVGATE_RETURN_IF_ERROR(WriteDataSet(state.path, index, sample, state.what));
    ++state.added;
    return Status::OK();
  }
  // One sample is written flat unless every name would read back as a "sample_<i>/" key.
  if (index == 0) state.flat = state.expected == 1 && !IsMultiSample(sample);
  const std::string prefix =
      state.flat ? std::string() : std::string(kSamplePrefix) + std::to_string(index) + "/";
  for (size_t k = 0; k < sample.size(); ++k) {
    const TensorMap::Entry& entry = sample[k];
    const std::string name = prefix + entry.name;
    if (state.layout == State::Layout::kSafetensors) {
      CONVGATE_RETURN_IF_ERROR(state.held.Insert(name, entry.tensor.Clone()));
      continue;
    }
    Result<std::string> bytes = io::SerializeNpy(entry.tensor);
    if (!bytes.ok()) {
      return bytes.status().WithContext("cannot write " + state.path.string() + ": member '" +
                                        name + "'");
    }
    const fs::path file =
        state.scratch->path() / (std::to_string(index) + "_" + std::to_string(k) + ".npy");
    CONVGATE_RETURN_IF_ERROR(WriteScratchFile(file, *bytes));
    state.members.push_back({name, file});
  }
  ++state.added;
  return Status::OK();
}

Status DatasetWriter::Finish() {
  State& state = *state_;
  if (state.added != state.expected) {
    return Status::FailedPrecondition(Quote(state.path) + " was to hold " +
                                      std::to_string(state.expected) + " samples and was given " +
                                      std::to_string(state.added));
  }
  switch (state.layout) {
    case State::Layout::kTestCase:
      return Status::OK();
    case State::Layout::kNpz: {
      Status written = io::WriteNpzFromFiles(state.path, state.members);
      state.scratch.reset();
      return written;
    }
    case State::Layout::kSafetensors:
      return io::WriteSafetensors(state.path, state.held);
  }
  return Status::Internal("unknown layout");
}

namespace {

Status SaveAll(Result<DatasetWriter> writer, const Dataset& dataset) {
  CONVGATE_RETURN_IF_ERROR(writer.status());
  for (const TensorMap& sample : dataset.samples) CONVGATE_RETURN_IF_ERROR(writer->Add(sample));
  return writer->Finish();
}

}  // namespace

Status SaveDataset(const fs::path& path, const Dataset& dataset, const Signature& signature) {
  return SaveAll(DatasetWriter::ForInputs(path, dataset.samples.size(), signature), dataset);
}

Status SaveOutputs(const fs::path& path, const Dataset& outputs,
                   const std::vector<TensorInfo>& declared) {
  return SaveAll(DatasetWriter::ForOutputs(path, outputs.samples.size(), declared), outputs);
}

}  // namespace convgate::inputs
