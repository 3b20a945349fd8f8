#include "convgate/core/text_table.h"

#include <algorithm>

#include "convgate/core/utf8.h"

namespace convgate {

void TextTable::AddRow(std::vector<std::string> cells, std::string color) {
  // Escaped here, not only when printed (cli ForTerminal): columns are sized to what is shown, so
  // a name holding bad bytes or controls does not push its row out of line.
  for (std::string& cell : cells) cell = EscapeForDisplay(cell);
  rows_.push_back({std::move(cells), std::move(color)});
}

std::string TextTable::Render(bool use_color) const {
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
    // An empty last cell (a job with no error) leaves no trailing blanks.
    text.erase(text.find_last_not_of(' ') + 1);
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

}  // namespace convgate
