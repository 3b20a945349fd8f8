// --data tokens: token id sequences from JSON (an array of arrays, or of objects holding the
// input's name) or JSONL (one array or object per line).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

using nlohmann::json;

// One sequence: an array of integers, or an object whose member named like the input is one.
Result<std::vector<int64_t>> SequenceOf(const json& item, const std::string& input,
                                        const std::string& where) {
  const json* array = &item;
  if (item.is_object()) {
    auto found = item.find(input);
    if (found == item.end()) {
      return Status::DataLoss(where + " is an object without '" + input + "'");
    }
    array = &*found;
  }
  if (!array->is_array()) return Status::DataLoss(where + " is not an array of token ids");
  std::vector<int64_t> ids;
  for (const json& id : *array) {
    if (!id.is_number_integer()) {
      return Status::DataLoss(where + " holds " + id.dump() + ", not an integer token id");
    }
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

Result<std::vector<std::vector<int64_t>>> ReadSequences(const std::string& bytes,
                                                        const std::string& path,
                                                        const std::string& input) {
  std::vector<std::vector<int64_t>> sequences;
  const json whole = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded()) {
    // A single array of ids is one sequence; an array of arrays or objects is several.
    if (whole.is_array() && !whole.empty() && whole.front().is_number_integer()) {
      CONVGATE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, SequenceOf(whole, input, path));
      sequences.push_back(std::move(ids));
      return sequences;
    }
    if (whole.is_object()) {
      CONVGATE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, SequenceOf(whole, input, path));
      sequences.push_back(std::move(ids));
      return sequences;
    }
    if (!whole.is_array()) return Status::DataLoss(path + " is JSON but not an array");
    for (size_t idx = 0; idx < whole.size(); ++idx) {
      CONVGATE_ASSIGN_OR_RETURN(
          std::vector<int64_t> ids,
          SequenceOf(whole[idx], input, path + " item " + std::to_string(idx)));
      sequences.push_back(std::move(ids));
    }
    return sequences;
  }
  for (const Line& line : NonBlankLines(bytes)) {
    const std::string where = path + " line " + std::to_string(line.number);
    const json item = json::parse(line.text, nullptr, false);
    if (item.is_discarded()) return Status::DataLoss(where + " is not JSON");
    CONVGATE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, SequenceOf(item, input, where));
    sequences.push_back(std::move(ids));
  }
  if (sequences.empty()) return Status::DataLoss(path + " holds no token sequence");
  return sequences;
}

}  // namespace

Status SequencesToRows(std::vector<std::vector<int64_t>> sequences, const InputPlan& plan,
                       const TokenOptions& options, const std::string& what, Rows& rows) {
  const std::string& name = plan.info->name;
  const size_t axis = plan.shape.size() - 1;
  // A fixed length pads or truncates every sequence; a dynamic one pads to the longest, so rows
  // batched together have one length.
  size_t longest = 0;
  for (const auto& ids : sequences) longest = std::max(longest, ids.size());
  const size_t length = plan.fixed[axis] ? static_cast<size_t>(plan.shape[axis]) : longest;
  int truncated = 0;
  for (const auto& ids : sequences) {
    std::vector<int64_t> dims = plan.shape;
    if (plan.batched) dims[0] = 1;
    dims[axis] = static_cast<int64_t>(length);
    CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
    CONVGATE_ASSIGN_OR_RETURN(Tensor row, Tensor::Allocate(plan.dtype, shape));
    for (size_t i = 0; i < length; ++i) {
      row.SetDouble(static_cast<int64_t>(i),
                    static_cast<double>(i < ids.size() ? ids[i] : options.pad_id.value_or(0)));
    }
    if (ids.size() > length) ++truncated;
    rows.lengths.push_back(static_cast<int64_t>(std::min(ids.size(), length)));
    rows.rows.push_back(std::move(row));
  }
  std::string note = "input '" + name + "': " + std::to_string(sequences.size()) + " " + what +
                     ", " + (plan.fixed[axis] ? "padded or truncated" : "padded") + " to " +
                     std::to_string(length) + " with id " +
                     std::to_string(options.pad_id.value_or(0));
  if (truncated > 0) note += "; " + std::to_string(truncated) + " truncated";
  rows.notes.push_back(note);
  return Status::OK();
}

Status CheckTokenInput(const InputPlan& plan, std::string_view kind) {
  CONVGATE_RETURN_IF_ERROR(CheckNumericInput(plan, kind));
  if (plan.shape.size() == (plan.batched ? 2u : 1u)) return Status::OK();
  return Status::InvalidArgument("--data " + std::string(kind) + ": input '" + plan.info->name +
                                 "' has rank " + std::to_string(plan.shape.size()) +
                                 "; token ids fill [batch, sequence] or [sequence]");
}

Result<Rows> LoadTokenRows(const DataSpec& spec, const InputPlan& plan, const TokenOptions& options,
                           const Limits& limits) {
  CONVGATE_RETURN_IF_ERROR(CheckTokenInput(plan, "tokens"));
  const std::string& name = plan.info->name;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files,
                            ListDataFiles(spec.path, {".json", ".jsonl"}, "token JSON"));
  Rows rows;
  std::vector<std::vector<int64_t>> sequences;
  for (const std::filesystem::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadDataFile(file, name, limits, rows.files));
    CONVGATE_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> read,
                              ReadSequences(bytes, file.string(), name));
    for (auto& ids : read) sequences.push_back(std::move(ids));
  }
  CONVGATE_RETURN_IF_ERROR(SequencesToRows(std::move(sequences), plan, options,
                                           "token sequence(s) from " + spec.path, rows));
  return rows;
}

}  // namespace convgate::loaders
