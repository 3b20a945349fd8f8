// Charts of the HTML report as inline SVG drawn here (no JavaScript, no library, no network): the
// page shows them as it is, in any browser, and a test reads their marks from the DOM.
#pragma once

#include <string>
#include <vector>

namespace convgate::report::html {

// Text for HTML content and attribute values (EscapeMarkup: bytes that are not UTF-8 and
// controls shown as \xNN, then the markup characters as entities).
std::string Escape(const std::string& text);

// A number for labels: 3 significant digits, exponent when small or large ("1.5e-05").
std::string Short(double value);

// A vertical mark on a chart at item `x` (a node index, a bin), labelled.
struct Mark {
  double x = 0;
  std::string label;
  std::string css_class;  // "culprit", "first-divergence", "nan-origin"
};

// A series of y values over items 0..n-1 on a log10 y axis (zeros drawn at the axis' floor).
struct Series {
  std::string name;
  std::string css_class;  // colour, from the page's style sheet
  std::vector<double> values;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::vector<Series> series;
  double threshold = 0;  // a horizontal dashed line (the tolerance) when > 0
  std::string threshold_label;
  std::vector<Mark> marks;
  std::vector<std::string> item_names;  // a <title> per point (tooltip), when given
};
std::string LineChartSvg(const LineChart& chart);

// Bars over labelled bins (a histogram), heights as fractions of the whole.
struct BarChart {
  std::string title;
  std::string x_label;
  std::vector<std::string> bin_labels;
  std::vector<double> fractions;
  int marked_bin = -1;  // the bin holding the tolerance, outlined
  std::string mark_label;
  std::string note;  // a line under the title (the tolerance when no bin holds it)
};
std::string BarChartSvg(const BarChart& chart);

// A small line of values over runs (oldest first) for a table cell: linear between the smallest
// and largest, the last value dotted; NaN or missing values are gaps.
std::string SparklineSvg(const std::vector<double>& values, const std::string& title);

// A square matrix of counts, shaded by count (log scale), the diagonal outlined.
struct Heatmap {
  std::string title;
  std::vector<std::string> labels;
  std::vector<std::vector<double>> counts;  // [row][column]
  std::string row_label;
  std::string column_label;
};
std::string HeatmapSvg(const Heatmap& map);

}  // namespace convgate::report::html
