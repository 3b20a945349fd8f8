// Classifier agreement read back from report.json (AddAgreementJson's inverse), so `convgate
// check` carries it over: agreement does not depend on the tolerance policy, and a failed
// agreement check must keep failing a re-judged report.
#include <limits>

#include "json_reader.h"
#include "policy_json.h"

namespace convgate::report::internal {
namespace {

// A confusion cell's class. Score outputs predict a position on the class axis, so their classes
// are in [0, classes): the matrix is laid out over that axis, and a report saying otherwise is
// refused rather than written out of bounds (found by fuzz/report_json_fuzz.cc).
int64_t ClassIndex(const JsonFields& cell, const char* key, const compare::AgreementStats& stats) {
  const int64_t label = cell.Int(key);
  if (stats.kind == compare::PredictionKind::kScores && (label < 0 || label >= stats.classes)) {
    cell.Fail(key, "is not a class of the " + std::to_string(stats.classes) + " on the axis");
  }
  return label;
}

// Reports cap the off-diagonal cells at kMaxJsonCells; the omitted ones cannot come back, and the
// counts derived from them (OffDiagonalRows) are then low. The check verdicts are read as saved.
compare::AgreementStats StatsFromJson(const JsonFields& json) {
  compare::AgreementStats stats;
  stats.kind = json.OneOf("kind", {"labels", "scores"}) == "labels"
                   ? compare::PredictionKind::kLabels
                   : compare::PredictionKind::kScores;
  stats.rows = json.Count("rows");
  stats.classes = json.Count("classes");
  stats.top1_agree = json.Object("top1").Count("agree");
  for (const JsonFields& entry : json.Objects("top_k")) {
    const int64_t k = entry.Count("k");
    if (k > std::numeric_limits<int>::max()) entry.Fail("k", "is out of range");
    stats.top_k_agree.emplace_back(static_cast<int>(k), entry.Count("agree"));
  }
  stats.flip_margin = json.Number("flip_margin");
  stats.margin_rows = json.Count("margin_rows");
  stats.flips = json.Count("flips");
  stats.nan_rows = json.Count("nan_rows");
  const JsonFields confusion = json.Object("confusion");
  for (const JsonFields& cell : confusion.Objects("diagonal")) {
    stats.diagonal[ClassIndex(cell, "label", stats)] = cell.Count("count");
  }
  for (const JsonFields& cell : confusion.Objects("off_diagonal")) {
    stats.off_diagonal.push_back({ClassIndex(cell, "source", stats),
                                  ClassIndex(cell, "target", stats), cell.Count("count")});
  }
  return stats;
}

}  // namespace

std::vector<gate::AgreementRecord> AgreementsFromJson(const JsonFields& report) {
  std::vector<gate::AgreementRecord> records;
  if (!report.Has("agreements")) return records;
  for (const JsonFields& entry : report.Objects("agreements")) {
    gate::AgreementRecord record;
    record.output = entry.String("output");
    record.selected_by = entry.String("selected_by");
    if (!entry.Raw("error").is_null()) record.error = entry.String("error");
    if (record.error.empty()) record.stats = StatsFromJson(entry);
    for (const JsonFields& check : entry.Objects("checks")) {
      record.checks.push_back({check.String("check"),
                               check.OneOf("verdict", {"pass", "fail"}) == "pass",
                               check.String("message")});
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace convgate::report::internal
