// report.json's "agreements": per classifier output, the counts, the confusion matrix (sparse, and
// dense when small) and the verdict of every --agreement check.
#include <algorithm>

#include "agreement_report.h"
#include "json_util.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

json ConfusionJson(const compare::AgreementStats& stats) {
  json diagonal = json::array();
  for (const auto& [label, count] : stats.diagonal) {
    diagonal.push_back({{"label", label}, {"count", count}});
  }
  json cells = json::array();
  for (size_t idx = 0; idx < stats.off_diagonal.size() && idx < kMaxJsonCells; ++idx) {
    const compare::ConfusionCell& cell = stats.off_diagonal[idx];
    cells.push_back({{"source", cell.source}, {"target", cell.target}, {"count", cell.count}});
  }
  const size_t omitted =
      stats.off_diagonal.size() > kMaxJsonCells ? stats.off_diagonal.size() - kMaxJsonCells : 0;
  json out{{"rows", "source label"}, {"columns", "target label"},       {"diagonal", diagonal},
           {"off_diagonal", cells},  {"off_diagonal_omitted", omitted}, {"dense", nullptr}};
  const std::vector<int64_t> labels = DenseLabels(stats);
  if (!labels.empty() && static_cast<int64_t>(labels.size()) <= kDenseJsonClasses) {
    out["dense"] = {{"labels", labels}, {"matrix", DenseMatrix(stats, labels)}};
  }
  return out;
}

json StatsJson(const compare::AgreementStats& stats) {
  json top_k = json::array();
  for (const auto& [k, agree] : stats.top_k_agree) {
    top_k.push_back({{"k", k}, {"agree", agree}, {"rate", Number(stats.TopK(k))}});
  }
  return json{{"kind", compare::PredictionKindName(stats.kind)},
              {"rows", stats.rows},
              {"classes", stats.classes},
              {"top1", {{"agree", stats.top1_agree}, {"rate", Number(stats.Top1())}}},
              {"top_k", top_k},
              {"flip_margin", Number(stats.flip_margin)},
              {"margin_rows", stats.margin_rows},
              {"flips", stats.flips},
              {"flip_rate", Number(stats.FlipRate())},
              {"nan_rows", stats.nan_rows},
              {"diagonal", stats.IsDiagonal()},
              {"off_diagonal_rows", stats.OffDiagonalRows()},
              {"confusion", ConfusionJson(stats)}};
}

json RecordJson(const gate::AgreementRecord& record) {
  json out{{"output", record.output},
           {"selected_by", record.selected_by},
           {"error", record.error.empty() ? json(nullptr) : json(record.error)}};
  if (record.error.empty()) out.update(StatsJson(record.stats));
  json checks = json::array();
  for (const gate::AgreementCheckResult& check : record.checks) {
    checks.push_back({{"check", check.check},
                      {"verdict", check.passed ? "pass" : "fail"},
                      {"message", check.message}});
  }
  out["checks"] = checks;
  return out;
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

void AddAgreementJson(const gate::CompareReport& report, json& out) {
  json records = json::array();
  for (const gate::AgreementRecord& record : report.agreements)
    records.push_back(RecordJson(record));
  out["agreements"] = records;
  const auto [checks, failed] = AgreementCheckCounts(report);
  const gate::AgreementCheckResult* first = report.FirstAgreementFailure();
  out["summary"]["agreement_checks"] = checks;
  out["summary"]["agreement_checks_failed"] = failed;
  out["summary"]["first_agreement_failure"] = first ? json(first->message) : json(nullptr);
}

}  // namespace convgate::report::internal
