// --data table: a CSV of numbers, one row per batch row; a first line that is not numbers is a
// header and is skipped.
#include "convgate/core/numbers.h"
#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string cell =
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
    const size_t first = cell.find_first_not_of(' ');
    cells.push_back(first == std::string::npos ? "" : cell.substr(first));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

Result<std::vector<double>> ParseRow(const std::vector<std::string>& cells) {
  std::vector<double> values;
  for (const std::string& cell : cells) {
    CONVGATE_ASSIGN_OR_RETURN(double value, ParseNumber(cell, -1e300, 1e300));
    values.push_back(value);
  }
  return values;
}

}  // namespace

Result<Rows> LoadTableRows(const DataSpec& spec, const InputPlan& plan, const Limits& limits) {
  CONVGATE_RETURN_IF_ERROR(CheckNumericInput(plan, "table"));
  const std::string& name = plan.info->name;
  if (plan.shape.size() != (plan.batched ? 2u : 1u)) {
    return Status::InvalidArgument("--data table: input '" + name + "' has rank " +
                                   std::to_string(plan.shape.size()) +
                                   "; CSV rows fill [batch, features] or [features]");
  }
  const size_t axis = plan.shape.size() - 1;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files,
                            ListDataFiles(spec.path, {".csv"}, "CSV"));
  Rows rows;
  size_t columns = plan.fixed[axis] ? static_cast<size_t>(plan.shape[axis]) : 0;
  for (const std::filesystem::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadDataFile(file, name, limits, rows.files));
    for (const Line& line : NonBlankLines(bytes)) {
      Result<std::vector<double>> values = ParseRow(SplitCsvLine(std::string(line.text)));
      const std::string where = file.string() + " line " + std::to_string(line.number);
      if (!values.ok()) {
        if (line.number == 1) continue;  // a header
        return Status::DataLoss(where + ": " + values.status().message());
      }
      if (columns == 0) columns = values->size();
      if (values->size() != columns) {
        return Status::DataLoss(where + " has " + std::to_string(values->size()) +
                                " values; input '" + name + "' takes " + std::to_string(columns) +
                                " per row");
      }
      std::vector<int64_t> dims = plan.shape;
      if (plan.batched) dims[0] = 1;
      dims[axis] = static_cast<int64_t>(columns);
      CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
      CONVGATE_ASSIGN_OR_RETURN(Tensor row, Tensor::Allocate(plan.dtype, shape));
      for (size_t i = 0; i < columns; ++i) row.SetDouble(static_cast<int64_t>(i), (*values)[i]);
      rows.rows.push_back(std::move(row));
    }
  }
  if (rows.rows.empty()) return Status::DataLoss("--data " + spec.path + " holds no CSV rows");
  rows.notes.push_back("input '" + name + "': " + std::to_string(rows.rows.size()) +
                       " CSV row(s) of " + std::to_string(columns) + " values from " + spec.path);
  return rows;
}

}  // namespace convgate::loaders
