#include "report/text/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "convgate/core/utf8.h"

namespace convgate::report::internal {

void Table::AddRow(std::vector<std::string> cells, std::string color) {
  // Escaped here, not only when printed (cli ForTerminal): columns are sized to what is shown, so
  // a name holding bad bytes or controls does not push its row out of line.
  for (std::string& cell : cells) cell = EscapeForDisplay(cell);
  rows_.push_back({std::move(cells), std::move(color)});
}

std::string Table::Render(bool use_color) const {
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t col = 0; col < cells.size() && col < widths.size(); ++col) {
      widths[col] = std::max(widths[col], cells[col].size());
    }
  };
  widen(header_);
  for (const Row& row : rows_) widen(row.cells);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t col = 0; col < cells.size(); ++col) {
      text += cells[col];
      if (col + 1 < cells.size()) text += std::string(widths[col] - cells[col].size() + 2, ' ');
    }
    return text;
  };
  std::string out = Paint(line(header_), kBold, use_color) + "\n";
  for (const Row& row : rows_) {
    out += (row.color.empty() ? line(row.cells)
                              : Paint(line(row.cells), row.color.c_str(), use_color)) +
           "\n";
  }
  return out;
}

std::string Paint(const std::string& text, const char* color, bool use_color) {
  if (!use_color) return text;
  return std::string(color) + text + kReset;
}

std::string Short(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

std::string Setting(double value) {
  if (!std::isfinite(value)) return Short(value);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.10g", value);
  return buffer;
}

}  // namespace convgate::report::internal
