// EvaluateAgreementCheck: one --agreement check against the counted agreement, as one sentence.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "convgate/compare/agreement_check.h"
#include "convgate/core/numbers.h"

namespace convgate::compare {
namespace {

bool Holds(double actual, Comparison op, double value) {
  switch (op) {
    case Comparison::kGreaterEqual:
      return actual >= value;
    case Comparison::kGreater:
      return actual > value;
    case Comparison::kLessEqual:
      return actual <= value;
    case Comparison::kLess:
      return actual < value;
    case Comparison::kEqual:
      return actual == value;
  }
  return false;
}

std::string_view Negation(Comparison op) {
  switch (op) {
    case Comparison::kGreaterEqual:
      return "<";
    case Comparison::kGreater:
      return "<=";
    case Comparison::kLessEqual:
      return ">";
    case Comparison::kLess:
      return ">=";
    case Comparison::kEqual:
      return "!=";
  }
  return "?";
}

// A rate with 4 decimals, or more when 4 would print it on the wrong side of the threshold
// (0.99995 against >= 0.9999 must not read "1.0000 < required 0.9999").
std::string RateText(double rate, const AgreementCheck& check) {
  const bool holds = Holds(rate, check.op, check.value);
  char buffer[32];
  for (int decimals = 4; decimals <= 12; ++decimals) {
    std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, rate);
    if (Holds(std::strtod(buffer, nullptr), check.op, check.value) == holds) break;
  }
  return buffer;
}

std::string Rows(int64_t count) { return std::to_string(count) + (count == 1 ? " row" : " rows"); }

// What changed: the most common off-diagonal cell and the NaN rows, or "" when nothing did.
std::string Changes(const AgreementStats& stats) {
  std::string text;
  if (!stats.off_diagonal.empty()) {
    const ConfusionCell& top = stats.off_diagonal.front();
    const char* word = stats.kind == PredictionKind::kScores ? "class " : "label ";
    text += "; " + Rows(stats.OffDiagonalRows()) + " changed prediction, most common: " + word +
            std::to_string(top.source) + " -> " + std::to_string(top.target) + " (" +
            Rows(top.count) + ")";
  }
  if (stats.nan_rows > 0) text += "; " + Rows(stats.nan_rows) + " with NaN (no prediction)";
  return text;
}

std::string MarginRows(const AgreementStats& stats) {
  if (stats.kind == PredictionKind::kLabels) return Rows(stats.margin_rows);
  return Rows(stats.margin_rows) + " with a source top-1 margin > " +
         FormatSignificant(stats.flip_margin);
}

// The measured value and how it was measured, e.g. "top-1 agreement 0.9940 (994 of 1000 rows)".
std::string Measured(const AgreementCheck& check, const AgreementStats& stats, double actual) {
  switch (check.metric) {
    case AgreementMetric::kTopK:
      return "top-" + std::to_string(check.k) + " agreement " + RateText(actual, check) + " (" +
             std::to_string(stats.TopKAgree(check.k)) + " of " + Rows(stats.rows) + ")";
    case AgreementMetric::kFlipRate:
      return "flip rate " + RateText(actual, check) + " (" + std::to_string(stats.flips) + " of " +
             MarginRows(stats) + ")";
    case AgreementMetric::kFlips:
      return "flips " + std::to_string(stats.flips) + " (among " + MarginRows(stats) + ")";
    case AgreementMetric::kDiagonal:
      break;
  }
  return "";
}

AgreementVerdict Diagonal(const AgreementStats& stats, const std::string& prefix) {
  if (stats.IsDiagonal()) {
    return {true, prefix + "confusion matrix is diagonal (" + Rows(stats.rows) + ")"};
  }
  return {false, prefix + "confusion matrix is not diagonal: " +
                     std::to_string(stats.OffDiagonalRows() + stats.nan_rows) + " of " +
                     Rows(stats.rows) + " off the diagonal" + Changes(stats)};
}

double Actual(const AgreementCheck& check, const AgreementStats& stats) {
  switch (check.metric) {
    case AgreementMetric::kTopK:
      return stats.TopK(check.k);
    case AgreementMetric::kFlipRate:
      return stats.FlipRate();
    case AgreementMetric::kFlips:
      return static_cast<double>(stats.flips);
    case AgreementMetric::kDiagonal:
      break;
  }
  return 0.0;
}

}  // namespace

AgreementVerdict EvaluateAgreementCheck(const AgreementCheck& check, const AgreementStats& stats) {
  const std::string prefix = "output '" + check.output + "': ";
  if (check.metric == AgreementMetric::kDiagonal) return Diagonal(stats, prefix);
  if (check.metric == AgreementMetric::kTopK && stats.TopKAgree(check.k) < 0) {
    return {false, prefix + "top-" + std::to_string(check.k) + " agreement was not counted"};
  }
  const double actual = Actual(check, stats);
  const bool passed = Holds(actual, check.op, check.value);
  const char* bound = check.op == Comparison::kLessEqual || check.op == Comparison::kLess
                          ? " allowed "
                          : " required ";
  const std::string relation =
      passed ? std::string(ComparisonText(check.op)) : std::string(Negation(check.op));
  return {passed, prefix + Measured(check, stats, actual) + " " + relation + bound +
                      FormatSignificant(check.value) + Changes(stats)};
}

}  // namespace convgate::compare
