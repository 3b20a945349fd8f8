// What each kind of data file becomes: rows of one input, each shaped as the input with a batch
// of one (or as the whole input when it has no batch dim), which load_data.cc stacks into samples.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/limits.h"
#include "convgate/core/signature.h"
#include "convgate/core/tensor.h"
#include "convgate/inputs/dataset.h"
#include "convgate/loaders/data_spec.h"

namespace convgate::loaders {

// One input as a loader fills it: its declaration, the shape it will have (inputs::PlanGenerated
// Inputs: --shape and --dim applied, unbound dims 1) and which of those sizes the model or the
// user fixed (an unbound one is the data's to choose).
struct InputPlan {
  const TensorInfo* info = nullptr;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<bool> fixed;
  bool batched = false;  // dim 0 is a batch of rows
};

struct Rows {
  // Decoded rows; empty when they are decoded one at a time (`decode`).
  std::vector<Tensor> rows;
  // Rows decoded when asked (images of a streamed dataset): `lazy` of them, row i read (and
  // recorded in `files`) by decode(i, files), again each time it is asked for.
  size_t lazy = 0;
  std::function<Result<Tensor>(size_t row, std::vector<inputs::DataFile>& files)> decode;
  std::vector<int64_t> lengths;  // tokens: each row's tokens before its padding
  std::vector<inputs::DataFile> files;
  std::vector<std::string> notes;

  size_t size() const { return decode ? lazy : rows.size(); }
};

// The files `path` names: itself, a folder's regular files whose extension is in `extensions`
// (lower case, with the dot; sorted by name, not recursive), or a glob's matches (sorted).
// NotFound naming the path when there are none.
Result<std::vector<std::filesystem::path>> ListDataFiles(const std::string& path,
                                                         const std::vector<std::string>& extensions,
                                                         std::string_view kind);

// A file's bytes under limits.max_tensor_bytes, with its record for the report.
Result<std::string> ReadDataFile(const std::filesystem::path& path, const std::string& input,
                                 const Limits& limits, std::vector<inputs::DataFile>& files);

// A text file's lines that hold more than blanks, each with its 1-based number (for messages), as
// views into `bytes`; a trailing '\r' is left on the line.
struct Line {
  size_t number;
  std::string_view text;
};
std::vector<Line> NonBlankLines(std::string_view bytes);

// InvalidArgument when a loader of `kind` cannot fill an input of this dtype.
Status CheckNumericInput(const InputPlan& plan, std::string_view kind);

// `lazy`: the rows are decoded when asked (Rows::decode), so a folder need not fit in memory.
Result<Rows> LoadImageRows(const DataSpec& spec, const InputPlan& plan, const ImageOptions& options,
                           const Limits& limits, bool lazy);
Result<Rows> LoadAudioRows(const DataSpec& spec, const InputPlan& plan, const AudioOptions& options,
                           const Limits& limits);
Result<Rows> LoadTokenRows(const DataSpec& spec, const InputPlan& plan, const TokenOptions& options,
                           const Limits& limits);
Result<Rows> LoadTextRows(const DataSpec& spec, const InputPlan& plan, const TokenOptions& options,
                          const Limits& limits);
// InvalidArgument unless the input takes token ids: integers, [batch, sequence] or [sequence].
Status CheckTokenInput(const InputPlan& plan, std::string_view kind);
// Token id sequences into rows (padded, truncated, lengths kept for a mask), with a note saying
// where they came from (`what`: "token sequence(s) from ids.jsonl").
Status SequencesToRows(std::vector<std::vector<int64_t>> sequences, const InputPlan& plan,
                       const TokenOptions& options, const std::string& what, Rows& rows);
Result<Rows> LoadTableRows(const DataSpec& spec, const InputPlan& plan, const Limits& limits);

}  // namespace convgate::loaders
