// A dataset is N samples; a sample is one set of named input tensors. Datasets are generated from
// a model's signature or loaded from files, and can be saved for reuse (--save-inputs).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "convgate/core/limits.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/input_options.h"

namespace convgate::inputs {

// One file a data loader read (--data), as the report records it.
struct DataFile {
  std::string input;   // the model input it fed
  std::string path;    // as found: a folder's files sorted by name
  std::string sha256;  // of the bytes read
};

// Makes sample `index` of a streamed dataset, recording in `files` the files it read.
using SampleMaker = std::function<Result<TensorMap>(size_t index, std::vector<DataFile>& files)>;

struct Dataset {
  // Every sample, or for a streamed dataset (`make` set) the first only.
  std::vector<TensorMap> samples;
  // "generated: uniform, seed 1, 2 samples" or the path it was loaded from; error messages about
  // the data name it.
  std::string origin;
  // Facts the report must carry ("input 'x' dim 0 ('batch') unbound: used 1; bind it with --dim
  // batch=N").
  std::vector<std::string> notes;
  std::vector<DataFile> files;  // loaded by --data (loaders/load_data.h); empty otherwise
  // A streamed dataset makes samples [1, streamed) when asked, one at a time, so that a run over
  // thousands of samples holds one: all of them alike (names, dtypes and shapes of samples[0]).
  SampleMaker make;
  size_t streamed = 0;

  size_t size() const { return make ? streamed : samples.size(); }
  bool is_streamed() const { return static_cast<bool>(make); }
  // A copy whose held samples' tensors are copied (TensorMap::Clone: tensors are copied only on
  // purpose); a streamed dataset's maker is shared, and makes the copy's samples too.
  Dataset Clone() const {
    Dataset copy;
    copy.origin = origin;
    copy.notes = notes;
    copy.files = files;
    copy.make = make;
    copy.streamed = streamed;
    for (const TensorMap& sample : samples) copy.samples.push_back(sample.Clone());
    return copy;
  }
};

// Generates options.samples samples for every input of `signature`, in declaration order.
// Shapes: --shape for that input wins (it must have the declared rank and fixed dims, and it binds
// the input's symbolic dims for the other inputs too); otherwise fixed dims are kept, symbolic dims
// take --dim (or --shape-bound) values, and unbound or unknown dims become 1, each such default
// recorded in notes (once per symbol). An input declaring no shape at all needs a --shape.
// Values: see Fill and InputOptions::range. Sample s of input i draws from its own
// Prng(DeriveSeed(seed, s, i)), so one input's values do not depend on the others.
// InvalidArgument naming the input for: a --shape contradicting the declaration or a --dim or
// another --shape, an input whose type convgate cannot hold (complex, sequence, ...), a uniform
// integer range holding no value of the dtype. InvalidArgument too for names in options that match
// no input and --dim symbols no input declares (a typo must not silently fall back to defaults),
// and for samples < 1. Unimplemented naming the input for a string input: made-up text says
// nothing about a model, so string inputs must be loaded (LoadDataset).
Result<Dataset> GenerateDataset(const Signature& signature, const InputOptions& options);

// GenerateDataset's dataset streamed (Dataset::make): sample 0 made now, the others alike when
// asked, each exactly as GenerateDataset makes it. Same checks and errors.
Result<Dataset> GenerateStreamedDataset(const Signature& signature, const InputOptions& options);

// One input as GenerateDataset would make it.
struct PlannedInput {
  std::string name;
  DType dtype;
  Shape shape;
};
// The dtype and shape GenerateDataset would give each input of one sample, in declaration order,
// without allocating or drawing anything: what a run will hold is known before it is allocated
// (--max-run-bytes). Same checks and errors as GenerateDataset.
Result<std::vector<PlannedInput>> PlanGeneratedInputs(const Signature& signature,
                                                      const InputOptions& options);

// The part of GenerateDataset's checks that needs only input names: every input a --fill,
// --val-range or --shape names exists. InvalidArgument naming the flag, the name and the inputs.
Status CheckInputNames(const Signature& signature, const InputOptions& options);

// Loads samples from:
//  - an .npz: flat (one sample, member name = input name) or, when every member is named
//    "sample_<i>/<input>", one sample per i (i must run from 0 without gaps, else DataLoss);
//  - a single .npy: one sample of a single-input model, named after the signature's only input
//    (InvalidArgument for a model with any other number of inputs);
//  - a folder of .npy files: one sample, each tensor named by its file's stem;
//  - an ONNX test-case folder or test_data_set_N folder: one sample per data set, input_K.pb named
//    by position from `signature` (output_K.pb files are not read).
// Only names come from `signature`; nothing is checked against it (see ValidateDataset).
// origin is set to the path. Errors name the file. String inputs come from numpy str or bytes
// arrays or from TensorProto string_data (see io/npy.h and io/tensor_proto.h). Files are read
// under `limits` (a tensor over max_tensor_bytes, an .npz over max_run_bytes, a FIFO or a device:
// FailedPrecondition naming the file).
Result<Dataset> LoadDataset(const std::filesystem::path& path, const Signature& signature,
                            const Limits& limits = Limits());

// An .npz (flat for one sample, "sample_<i>/<input>" members for several) or, when `path` has no
// .npz extension, an ONNX test case folder (test_data_set_<i>/input_K.pb, the signature's inputs
// first in declaration order, then any other tensors). The folder is created if needed and the
// input_K.pb files of data sets already in it are overwritten; output_K.pb files are left as they
// are (see SaveOutputs). A data set numbered beyond the dataset's samples would be read back as an
// extra sample, so its presence is FailedPrecondition. An .npy path is InvalidArgument (one tensor
// cannot hold a dataset); a dataset with no samples is FailedPrecondition. String tensors become
// numpy str arrays in an .npz (InvalidArgument for one that is not UTF-8) and string_data in a
// test case. An .npz is replaced whole.
Status SaveDataset(const std::filesystem::path& path, const Dataset& dataset,
                   const Signature& signature);

// SaveDataset for a model's outputs (--save-outputs): each sample of `outputs` holds one run's
// output tensors. In a test case folder they become test_data_set_<i>/output_K.pb, in the order of
// `declared` (the model's declared outputs; may be empty), beside any input_K.pb files, which are
// left untouched; so inputs and outputs saved to one folder read back as an ONNX test case. Errors
// as SaveDataset's, naming outputs.
Status SaveOutputs(const std::filesystem::path& path, const Dataset& outputs,
                   const std::vector<TensorInfo>& declared);

// SaveDataset and SaveOutputs one sample at a time, so that a streamed data set (or a run's
// outputs) is saved without being held: a test case's data sets are written as they come, an
// .npz's members go to .npy files in a private folder and are archived by Finish (the file at
// `path` is replaced only then, whole), a .safetensors is held until Finish (its header lists
// every tensor first). Same layouts and errors as SaveDataset (Open's for the path, Add's for a
// sample); Finish is FailedPrecondition when fewer samples than `samples` were added.
class DatasetWriter {
 public:
  static Result<DatasetWriter> ForInputs(const std::filesystem::path& path, size_t samples,
                                         const Signature& signature);
  static Result<DatasetWriter> ForOutputs(const std::filesystem::path& path, size_t samples,
                                          const std::vector<TensorInfo>& declared);
  DatasetWriter(DatasetWriter&&) noexcept;
  DatasetWriter& operator=(DatasetWriter&&) noexcept;
  ~DatasetWriter();

  Status Add(const TensorMap& sample);
  Status Finish();
  const std::filesystem::path& path() const;

 private:
  struct State;
  explicit DatasetWriter(std::unique_ptr<State> state);
  static Result<DatasetWriter> Open(const std::filesystem::path& path, size_t samples, bool outputs,
                                    std::vector<TensorInfo> order);
  std::unique_ptr<State> state_;
};

// Checks every sample against the signature: each declared input present (missing ones named,
// with the file), dtype equal to the declared one (string included), rank and fixed dims equal to
// the declared ones, symbolic dims bound consistently within a sample. FailedPrecondition naming
// the sample, the input, the file (dataset.origin) and both values; Unimplemented for a declared
// input whose type convgate cannot hold; FailedPrecondition for a dataset with no samples. On
// success, every sample holds exactly the declared inputs in declaration order: tensors the model
// does not take are dropped and named in dataset.notes (an npz may hold inputs and outputs
// together). On failure the dataset is unchanged.
Status ValidateDataset(Dataset& dataset, const Signature& signature);

}  // namespace convgate::inputs
