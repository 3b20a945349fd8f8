// A plain-text table with left-aligned columns, sized to its widest cell.
#pragma once

#include <string>
#include <vector>

namespace convgate::report::internal {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> cells, std::string color = "");
  // Rows end in '\n'; `color` wraps a row in an ANSI colour when `use_color`.
  std::string Render(bool use_color) const;

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
// "1.23e-05"-style short number; "nan"/"inf" spelled out.
std::string Short(double value);
// A value the user set (a tolerance, a floor), shown as given: up to 10 significant digits, so
// min_cosine 0.9995 does not read as 1.
std::string Setting(double value);

}  // namespace convgate::report::internal
