// report.json's "agreements": per classifier output, the counts, the confusion matrix (sparse, and
// dense when small) and the verdict of every --agreement check. `convgate check` reads them back
// through the same description and carries them over: agreement does not depend on the tolerance
// policy, and a failed agreement check must keep failing a re-judged report.
#include <limits>

#include "report/agreement_report.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

// A confusion cell's class. Score outputs predict a position on the class axis, so their classes
// are in [0, classes): the matrix is laid out over that axis, and a report saying otherwise is
// refused rather than written out of bounds (found by fuzz/report_json_fuzz.cc).
template <typename Io>
void ClassField(Io& io, const char* key, int64_t& label, const compare::AgreementStats& stats) {
  io.Int(key, label);
  if constexpr (Io::kReading) {
    if (stats.kind == compare::PredictionKind::kScores && (label < 0 || label >= stats.classes)) {
      io.fields().Fail(key,
                       "is not a class of the " + std::to_string(stats.classes) + " on the axis");
    }
  }
}
template <typename Io>
void ClassField(Io& io, const char* key, const int64_t& label,
                const compare::AgreementStats& /*stats*/) {
  io.Int(key, label);
}

// Reports cap the off-diagonal cells at kMaxJsonCells; the omitted ones cannot come back, and the
// counts derived from them (OffDiagonalRows) are then low.
template <typename Io, typename Stats>
void ConfusionFields(Io& io, Stats& stats) {
  io.Derived("rows", "source label");
  io.Derived("columns", "target label");
  io.Entries("diagonal", stats.diagonal, [&](auto& part, auto& entry) {
    ClassField(part, "label", entry.first, stats);
    part.Count("count", entry.second);
  });
  const size_t kept = std::min(stats.off_diagonal.size(), kMaxJsonCells);
  std::vector<compare::ConfusionCell> cells(stats.off_diagonal.begin(),
                                            stats.off_diagonal.begin() + kept);
  io.Objects("off_diagonal", cells, [&](auto& part, auto& cell) {
    ClassField(part, "source", cell.source, stats);
    ClassField(part, "target", cell.target, stats);
    part.Count("count", cell.count);
  });
  if constexpr (Io::kReading) {
    stats.off_diagonal = std::move(cells);
  } else {
    io.Derived("off_diagonal_omitted", stats.off_diagonal.size() - kept);
    json dense = nullptr;
    const std::vector<int64_t> labels = DenseLabels(stats);
    if (!labels.empty() && static_cast<int64_t>(labels.size()) <= kDenseJsonClasses) {
      dense = {{"labels", labels}, {"matrix", DenseMatrix(stats, labels)}};
    }
    io.Derived("dense", dense);
  }
}

// Rates, and whether the matrix is diagonal, are derived from the counts: written, not read.
template <typename Io, typename Stats>
void StatsFields(Io& io, Stats& stats) {
  io.Choice("kind", stats.kind,
            {std::pair<std::string_view, compare::PredictionKind>{"labels",
                                                                  compare::PredictionKind::kLabels},
             {"scores", compare::PredictionKind::kScores}});
  io.Count("rows", stats.rows);
  io.Count("classes", stats.classes);
  io.Object("top1", stats, [](auto& part, auto& top1) {
    part.Count("agree", top1.top1_agree);
    part.Derived("rate", Number(top1.Top1()));
  });
  io.Objects("top_k", stats.top_k_agree, [&](auto& part, auto& entry) {
    part.Count("k", entry.first);
    part.Count("agree", entry.second);
    part.Derived("rate", Number(stats.TopK(entry.first)));
  });
  io.Number("flip_margin", stats.flip_margin);
  io.Count("margin_rows", stats.margin_rows);
  io.Count("flips", stats.flips);
  io.Derived("flip_rate", Number(stats.FlipRate()));
  io.Count("nan_rows", stats.nan_rows);
  io.Derived("diagonal", stats.IsDiagonal());
  io.Derived("off_diagonal_rows", stats.OffDiagonalRows());
  io.Object("confusion", stats,
            [](auto& part, auto& confusion) { ConfusionFields(part, confusion); });
}

template <typename Io, typename Record>
void RecordFields(Io& io, Record& record) {
  io.Text("output", record.output);
  io.Text("selected_by", record.selected_by);
  io.TextOrNull("error", record.error);
  if (record.error.empty()) StatsFields(io, record.stats);
  io.Objects("checks", record.checks, [](auto& part, auto& check) {
    part.Text("check", check.check);
    part.Choice("verdict", check.passed,
                {std::pair<std::string_view, bool>{"pass", true}, {"fail", false}});
    part.Text("message", check.message);
  });
}

}  // namespace

std::vector<int64_t> DenseLabels(const compare::AgreementStats& stats) {
  if (stats.kind == compare::PredictionKind::kLabels || stats.classes > kDenseJsonClasses) {
    return stats.Labels();
  }
  // Few scores classes: every class on the axis, predicted or not (a fixed-size matrix).
  std::vector<int64_t> labels;
  for (int64_t label = 0; label < stats.classes; ++label) labels.push_back(label);
  return labels;
}

std::vector<std::vector<int64_t>> DenseMatrix(const compare::AgreementStats& stats,
                                              const std::vector<int64_t>& labels) {
  auto position = [&](int64_t label) {
    return static_cast<size_t>(std::lower_bound(labels.begin(), labels.end(), label) -
                               labels.begin());
  };
  std::vector<std::vector<int64_t>> matrix(labels.size(), std::vector<int64_t>(labels.size(), 0));
  for (const auto& [label, count] : stats.diagonal) {
    matrix[position(label)][position(label)] = count;
  }
  for (const compare::ConfusionCell& cell : stats.off_diagonal) {
    matrix[position(cell.source)][position(cell.target)] = cell.count;
  }
  return matrix;
}

json AgreementsJson(const gate::CompareReport& report) {
  json records = json::array();
  for (const gate::AgreementRecord& record : report.agreements) {
    records.push_back(JsonWriter::Write(record, [](auto& io, auto& r) { RecordFields(io, r); }));
  }
  return records;
}

std::vector<gate::AgreementRecord> AgreementsFromJson(const JsonFields& report) {
  std::vector<gate::AgreementRecord> records;
  if (!report.Has("agreements")) return records;
  JsonReader(report).Objects("agreements", records,
                             [](auto& io, auto& record) { RecordFields(io, record); });
  return records;
}

}  // namespace convgate::report::internal
