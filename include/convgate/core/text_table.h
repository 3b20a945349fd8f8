// A plain-text table with left-aligned columns, each as wide as its widest cell and two spaces
// apart: the console tables of every command (compare's results, batch and Slurm summaries,
// history, cache ls) are drawn by this one class.
#pragma once

#include <string>
#include <vector>

namespace convgate {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // Cells are escaped for display (core/utf8.h) here, so a name holding bad bytes or controls
  // does not push its row out of line. `color` wraps the row in an ANSI colour when rendered
  // with colour.
  void AddRow(std::vector<std::string> cells, std::string color = "");
  // The header, then the rows; every line ends in '\n', and the last column is not padded.
  std::string Render(bool use_color = false) const;
  bool empty() const { return rows_.empty(); }

 private:
  struct Row {
    std::vector<std::string> cells;
    std::string color;
  };
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

inline constexpr char kRed[] = "\033[31m";
inline constexpr char kGreen[] = "\033[32m";
inline constexpr char kYellow[] = "\033[33m";
inline constexpr char kBold[] = "\033[1m";
inline constexpr char kReset[] = "\033[0m";

// `text` wrapped in `color` when use_color.
std::string Paint(const std::string& text, const char* color, bool use_color);

}  // namespace convgate
