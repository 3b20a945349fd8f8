// Classifier agreement as text: the console section, JUnit cases and the verify_result sentence.
#include <algorithm>
#include <cstdio>

#include "report/agreement_report.h"
#include "report/text/table.h"

namespace convgate::report::internal {
namespace {

// Off-diagonal pairs the console lists when the matrix is too large to print.
constexpr size_t kConsolePairs = 5;

std::string Rate(double rate) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4f", rate);
  return buffer;
}

std::string TopKCell(const compare::AgreementStats& stats) {
  std::string text;
  for (const auto& [k, agree] : stats.top_k_agree) {
    text += (text.empty() ? "" : ", ") + std::string("k=") + std::to_string(k) + " " +
            Rate(stats.TopK(k));
  }
  return text.empty() ? "-" : text;
}

std::vector<std::string> Row(const gate::AgreementRecord& record) {
  if (!record.error.empty()) {
    return {record.output, record.selected_by, "-", "-", "-", "-", "-", "not counted"};
  }
  const compare::AgreementStats& stats = record.stats;
  std::string flips = std::to_string(stats.flips) + "/" + std::to_string(stats.margin_rows);
  if (stats.nan_rows > 0) flips += " (" + std::to_string(stats.nan_rows) + " NaN)";
  return {record.output,
          record.selected_by,
          std::string(compare::PredictionKindName(stats.kind)),
          std::to_string(stats.rows),
          Rate(stats.Top1()),
          TopKCell(stats),
          flips,
          stats.IsDiagonal() ? "yes" : "no"};
}

std::string DenseText(const compare::AgreementStats& stats, const std::vector<int64_t>& labels) {
  const std::vector<std::vector<int64_t>> matrix = DenseMatrix(stats, labels);
  std::vector<std::string> header{"source \\ target"};
  for (int64_t label : labels) header.push_back(std::to_string(label));
  Table table(header);
  for (size_t row = 0; row < labels.size(); ++row) {
    std::vector<std::string> cells{std::to_string(labels[row])};
    for (int64_t count : matrix[row]) cells.push_back(std::to_string(count));
    table.AddRow(cells);
  }
  return table.Render(false);
}

std::string PairsText(const compare::AgreementStats& stats) {
  std::string text;
  for (size_t idx = 0; idx < stats.off_diagonal.size() && idx < kConsolePairs; ++idx) {
    const compare::ConfusionCell& cell = stats.off_diagonal[idx];
    text += "  " + std::to_string(cell.source) + " -> " + std::to_string(cell.target) + ": " +
            std::to_string(cell.count) + (cell.count == 1 ? " row\n" : " rows\n");
  }
  if (stats.off_diagonal.size() > kConsolePairs) {
    text += "  ... " + std::to_string(stats.off_diagonal.size() - kConsolePairs) +
            " more pairs (report.json has them)\n";
  }
  return text;
}

std::string ConfusionText(const gate::AgreementRecord& record) {
  if (!record.error.empty()) return "output '" + record.output + "': " + record.error + "\n";
  const compare::AgreementStats& stats = record.stats;
  // Over the labels either side actually predicted: a 1000-class model whose 3 samples all
  // predicted class 2 shows a 1x1 matrix, not a 1000x1000 one.
  const std::vector<int64_t> labels = stats.Labels();
  if (!labels.empty() && static_cast<int64_t>(labels.size()) <= kDenseConsoleClasses) {
    return "confusion '" + record.output + "' (rows: source label, columns: target label)\n" +
           DenseText(stats, labels);
  }
  if (stats.off_diagonal.empty()) return "";
  return "confusion '" + record.output +
         "': most frequent off-diagonal pairs (source -> target)\n" + PairsText(stats);
}

}  // namespace

std::string AgreementSection(const gate::CompareReport& report, bool color) {
  if (report.agreements.empty()) return "";
  Table table({"output", "selected", "kind", "rows", "top-1", "top-k", "flips", "diagonal"});
  for (const gate::AgreementRecord& record : report.agreements) {
    // Red when a check failed; yellow when predictions differ but nothing gates on them.
    const bool failed = std::any_of(record.checks.begin(), record.checks.end(),
                                    [](const gate::AgreementCheckResult& c) { return !c.passed; });
    const bool differs = !record.error.empty() || !record.stats.IsDiagonal();
    table.AddRow(Row(record), failed ? kRed : (differs ? kYellow : ""));
  }
  std::string out = Paint("classifier agreement", kBold, color) +
                    " (flips: rows whose source top-1 leads by more than the flip margin; only "
                    "--agreement checks gate)\n" +
                    table.Render(color);
  for (const gate::AgreementRecord& record : report.agreements) out += ConfusionText(record);
  for (const gate::AgreementRecord& record : report.agreements) {
    for (const gate::AgreementCheckResult& check : record.checks) {
      out += (check.passed ? Paint("PASS", kGreen, color) : Paint("FAIL", kRed, color)) + " " +
             check.check + ": " + check.message + "\n";
    }
  }
  return out + "\n";
}

std::pair<size_t, size_t> AgreementCheckCounts(const gate::CompareReport& report) {
  size_t checks = 0, failed = 0;
  for (const gate::AgreementRecord& record : report.agreements) {
    for (const gate::AgreementCheckResult& check : record.checks) {
      ++checks;
      failed += check.passed ? 0 : 1;
    }
  }
  return {checks, failed};
}

std::string AgreementVerdictSuffix(const gate::CompareReport& report) {
  const auto [checks, failed] = AgreementCheckCounts(report);
  if (checks == 0) return "";
  if (failed == 0) return "; " + std::to_string(checks) + " agreement check(s) passed";
  return "; " + std::to_string(failed) + " of " + std::to_string(checks) +
         " agreement check(s) failed";
}

std::vector<std::pair<std::string, std::vector<std::string>>> AgreementCases(
    const gate::CompareReport& report) {
  std::vector<std::pair<std::string, std::vector<std::string>>> cases;
  for (const gate::AgreementRecord& record : report.agreements) {
    for (const gate::AgreementCheckResult& check : record.checks) {
      std::vector<std::string> lines;
      if (!check.passed) lines.push_back(check.message);
      cases.emplace_back("agreement / " + check.check, std::move(lines));
    }
  }
  return cases;
}

std::string AgreementDetail(const gate::CompareReport& report) {
  const auto [checks, failed] = AgreementCheckCounts(report);
  if (checks == 0) return "";
  return std::to_string(checks) + " agreement check(s): " + std::to_string(failed) + " failed";
}

}  // namespace convgate::report::internal
