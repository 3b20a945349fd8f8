#include "report/html/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "report/text/markup.h"

namespace convgate::report::html {
namespace {

constexpr double kWidth = 760;
constexpr double kHeight = 260;
constexpr double kLeft = 64;
constexpr double kRight = 16;
constexpr double kTop = 28;
constexpr double kBottom = 44;

std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", value);
  return buffer;
}

std::string Open(const std::string& css_class, const std::string& title, double height) {
  return "<svg class=\"chart " + css_class + "\" role=\"img\" viewBox=\"0 0 " + Num(kWidth) + " " +
         Num(height) + "\" width=\"" + Num(kWidth) + "\" height=\"" + Num(height) +
         "\" xmlns=\"http://www.w3.org/2000/svg\"><title>" + Escape(title) +
         "</title><text class=\"chart-title\" x=\"" + Num(kLeft) + "\" y=\"16\">" + Escape(title) +
         "</text>";
}

std::string Text(double x, double y, const std::string& text, const std::string& css_class,
                 const std::string& anchor = "start") {
  return "<text class=\"" + css_class + "\" x=\"" + Num(x) + "\" y=\"" + Num(y) +
         "\" text-anchor=\"" + anchor + "\">" + Escape(text) + "</text>";
}

std::string Line(double x1, double y1, double x2, double y2, const std::string& css_class) {
  return "<line class=\"" + css_class + "\" x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" +
         Num(x2) + "\" y2=\"" + Num(y2) + "\"/>";
}

// A log10 axis over the positive values (and the threshold), with a floor a decade below the
// smallest so zeros (exact agreement) show at the bottom.
struct LogAxis {
  double low = -12;  // log10
  double high = 0;
  double Y(double value) const {
    const double log_value =
        value > 0 && std::isfinite(value) ? std::clamp(std::log10(value), low, high) : low;
    return kTop + (high - log_value) / (high - low) * (kHeight - kTop - kBottom);
  }
};

LogAxis AxisFor(const LineChart& chart) {
  double smallest = std::numeric_limits<double>::infinity();
  double largest = 0;
  const auto see = [&](double value) {
    if (!(value > 0) || !std::isfinite(value)) return;
    smallest = std::min(smallest, value);
    largest = std::max(largest, value);
  };
  for (const Series& series : chart.series) {
    for (double value : series.values) see(value);
  }
  see(chart.threshold);
  LogAxis axis;
  if (largest <= 0) return axis;  // nothing positive: the default decades
  axis.high = std::ceil(std::log10(largest) + 0.05);
  axis.low = std::floor(std::log10(smallest)) - 1;
  if (axis.high - axis.low < 2) axis.low = axis.high - 2;
  return axis;
}

std::string YTicks(const LogAxis& axis) {
  std::string out;
  const int step = std::max(1, static_cast<int>(std::ceil((axis.high - axis.low) / 6)));
  for (int decade = static_cast<int>(axis.high); decade >= axis.low; decade -= step) {
    const double y = axis.Y(std::pow(10.0, decade));
    out += Line(kLeft, y, kWidth - kRight, y, "grid");
    out += Text(kLeft - 6, y + 4, "1e" + std::to_string(decade), "tick", "end");
  }
  return out;
}

}  // namespace

std::string Escape(const std::string& text) { return EscapeMarkup(text); }

std::string Short(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

std::string LineChartSvg(const LineChart& chart) {
  const LogAxis axis = AxisFor(chart);
  size_t count = 0;
  for (const Series& series : chart.series) count = std::max(count, series.values.size());
  const double plot_width = kWidth - kLeft - kRight;
  const auto x_of = [&](double item) {
    return kLeft +
           (count <= 1 ? plot_width / 2 : item / static_cast<double>(count - 1) * plot_width);
  };
  std::string out = Open("line-chart", chart.title, kHeight) + YTicks(axis);
  out += Line(kLeft, kHeight - kBottom, kWidth - kRight, kHeight - kBottom, "axis");
  out += Text(kLeft + plot_width / 2, kHeight - 8, chart.x_label, "axis-label", "middle");
  for (const Series& series : chart.series) {
    std::string points;
    for (size_t i = 0; i < series.values.size(); ++i) {
      points += Num(x_of(static_cast<double>(i))) + "," + Num(axis.Y(series.values[i])) + " ";
    }
    out += "<polyline class=\"series " + series.css_class + "\" data-series=\"" +
           Escape(series.name) + "\" points=\"" + points + "\"/>";
    // Points only where they can be told apart: a dot per item up to 400 items.
    if (series.values.size() <= 400) {
      for (size_t i = 0; i < series.values.size(); ++i) {
        out += "<circle class=\"dot " + series.css_class + "\" cx=\"" +
               Num(x_of(static_cast<double>(i))) + "\" cy=\"" + Num(axis.Y(series.values[i])) +
               "\" r=\"2.5\"><title>" +
               Escape((i < chart.item_names.size() ? chart.item_names[i] + ": " : "") +
                      series.name + " " + Short(series.values[i])) +
               "</title></circle>";
      }
    }
  }
  if (chart.threshold > 0) {
    const double y = axis.Y(chart.threshold);
    out += Line(kLeft, y, kWidth - kRight, y, "threshold");
    out += Text(kWidth - kRight, y - 4, chart.threshold_label, "threshold-label", "end");
  }
  for (const Mark& mark : chart.marks) {
    const double x = x_of(mark.x);
    // Labels one under another: marks on the same node must not overprint.
    const double label_y = kTop + 10 + 12 * static_cast<double>(&mark - chart.marks.data());
    const bool right_half = x > kLeft + plot_width / 2;
    out += "<g class=\"mark " + mark.css_class + "\">" +
           Line(x, kTop, x, kHeight - kBottom, "mark-line") +
           Text(right_half ? x - 3 : x + 3, label_y, mark.label, "mark-label",
                right_half ? "end" : "start") +
           "</g>";
  }
  // A legend, top right.
  double legend_x = kWidth - kRight - 150.0 * static_cast<double>(chart.series.size());
  for (const Series& series : chart.series) {
    out += "<rect class=\"legend " + series.css_class + "\" x=\"" + Num(legend_x) +
           "\" y=\"8\" width=\"12\" height=\"4\"/>" +
           Text(legend_x + 16, 14, series.name, "legend-label");
    legend_x += 150;
  }
  return out + "</svg>";
}

std::string BarChartSvg(const BarChart& chart) {
  const size_t bins = chart.fractions.size();
  std::string out = Open("bar-chart", chart.title, kHeight);
  if (!chart.note.empty()) out += Text(kLeft, kTop - 2, chart.note, "threshold-label");
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  double largest = 0;
  for (double fraction : chart.fractions) largest = std::max(largest, fraction);
  if (largest <= 0) largest = 1;
  for (int percent : {0, 25, 50, 75, 100}) {
    const double y = kTop + plot_height * (1 - percent / 100.0);
    out += Line(kLeft, y, kWidth - kRight, y, "grid");
    out += Text(kLeft - 6, y + 4, Short(largest * percent) + "%", "tick", "end");
  }
  const double width = bins == 0 ? 0 : plot_width / static_cast<double>(bins);
  for (size_t i = 0; i < bins; ++i) {
    const double height = chart.fractions[i] / largest * plot_height;
    const double x = kLeft + width * static_cast<double>(i);
    const bool marked = static_cast<int>(i) == chart.marked_bin;
    out += "<rect class=\"bar" + std::string(marked ? " marked" : "") + "\" x=\"" + Num(x + 1) +
           "\" y=\"" + Num(kTop + plot_height - height) + "\" width=\"" +
           Num(std::max(1.0, width - 2)) + "\" height=\"" + Num(height) + "\"><title>" +
           Escape(chart.bin_labels[i] + ": " + Short(chart.fractions[i] * 100) + "% of elements") +
           "</title></rect>";
    if (bins <= 16 || i % ((bins + 15) / 16) == 0) {
      out += Text(x + width / 2, kHeight - kBottom + 14, chart.bin_labels[i], "tick", "middle");
    }
  }
  if (chart.marked_bin >= 0 && static_cast<size_t>(chart.marked_bin) < bins) {
    const double x = kLeft + width * chart.marked_bin + width / 2;
    out += "<g class=\"mark tolerance\">" + Line(x, kTop, x, kHeight - kBottom, "threshold") +
           Text(x + 3, kTop + 10, chart.mark_label, "threshold-label") + "</g>";
  }
  out += Line(kLeft, kHeight - kBottom, kWidth - kRight, kHeight - kBottom, "axis");
  out += Text(kLeft + plot_width / 2, kHeight - 8, chart.x_label, "axis-label", "middle");
  return out + "</svg>";
}

std::string SparklineSvg(const std::vector<double>& values, const std::string& title) {
  constexpr double kW = 120;
  constexpr double kH = 24;
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  for (double value : values) {
    if (!std::isfinite(value)) continue;
    low = std::min(low, value);
    high = std::max(high, value);
  }
  std::string out =
      "<svg class=\"sparkline\" viewBox=\"0 0 120 24\" width=\"120\" height=\"24\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>" +
      Escape(title) + "</title>";
  if (!(low <= high)) return out + "</svg>";
  const auto x_of = [&](size_t i) {
    return values.size() <= 1 ? kW / 2
                              : 3 + static_cast<double>(i) / (values.size() - 1) * (kW - 6);
  };
  const auto y_of = [&](double value) {
    return high > low ? kH - 3 - (value - low) / (high - low) * (kH - 6) : kH / 2;
  };
  std::string points;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      if (!points.empty()) out += "<polyline class=\"spark\" points=\"" + points + "\"/>";
      points.clear();
      continue;
    }
    points += Num(x_of(i)) + "," + Num(y_of(values[i])) + " ";
  }
  if (!points.empty()) out += "<polyline class=\"spark\" points=\"" + points + "\"/>";
  if (std::isfinite(values.back())) {
    out += "<circle class=\"spark-last\" cx=\"" + Num(x_of(values.size() - 1)) + "\" cy=\"" +
           Num(y_of(values.back())) + "\" r=\"2\"/>";
  }
  return out + "</svg>";
}

std::string HeatmapSvg(const Heatmap& map) {
  const size_t n = map.labels.size();
  const double side = std::min(24.0, 480.0 / std::max<size_t>(n, 1));
  const double left = 90;
  const double top = 40;
  const double height = top + side * static_cast<double>(n) + 40;
  double largest = 0;
  for (const auto& row : map.counts) {
    for (double count : row) largest = std::max(largest, count);
  }
  std::string out = Open("heatmap", map.title, height);
  for (size_t r = 0; r < n && r < map.counts.size(); ++r) {
    out +=
        Text(left - 4, top + side * (static_cast<double>(r) + 0.7), map.labels[r], "tick", "end");
    for (size_t c = 0; c < n && c < map.counts[r].size(); ++c) {
      const double count = map.counts[r][c];
      // Log shading: one miss among thousands still shows.
      const double shade =
          count <= 0 ? 0 : 0.15 + 0.85 * std::log1p(count) / std::log1p(std::max(largest, 1.0));
      char fill[64];
      std::snprintf(fill, sizeof(fill), "rgba(%d,%d,%d,%.3f)", r == c ? 40 : 200, r == c ? 110 : 40,
                    r == c ? 200 : 40, shade);
      out += "<rect class=\"cell" + std::string(r == c ? " diagonal" : "") + "\" x=\"" +
             Num(left + side * static_cast<double>(c)) + "\" y=\"" +
             Num(top + side * static_cast<double>(r)) + "\" width=\"" + Num(side - 1) +
             "\" height=\"" + Num(side - 1) + "\" fill=\"" + fill + "\"><title>" +
             Escape(map.row_label + " " + map.labels[r] + ", " + map.column_label + " " +
                    map.labels[c] + ": " + Short(count)) +
             "</title></rect>";
    }
  }
  out += Text(left, height - 12, map.row_label + " (rows) x " + map.column_label + " (columns)",
              "axis-label");
  return out + "</svg>";
}

}  // namespace convgate::report::html
