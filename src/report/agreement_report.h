// Classifier agreement in every report form: report.json, the console section, JUnit cases and the
// verify_result.json sentence. The compare renderers call these; nothing here renders anything
// else.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "convgate/gate/results.h"
#include "report/json/reader.h"

namespace convgate::report::internal {

// Confusion matrices are written dense as well as sparse up to this many classes (a 20 x 20 table
// is still readable in a JSON viewer).
inline constexpr int64_t kDenseJsonClasses = 20;
// The console prints a dense matrix up to this many classes (80 columns), else the top pairs.
inline constexpr int64_t kDenseConsoleClasses = 10;
// Off-diagonal cells kept in report.json: a badly wrong model over a million rows and 1000 classes
// could have hundreds of thousands; the omitted count is written beside them.
inline constexpr size_t kMaxJsonCells = 10000;

// The labels a dense confusion matrix is indexed by, ascending: for scores with at most
// kDenseJsonClasses classes every class, otherwise the labels either side predicted.
std::vector<int64_t> DenseLabels(const compare::AgreementStats& stats);
// matrix[i][j] = rows the source labelled labels[i] and the target labels[j].
// REQUIRES: labels holds every label in stats (DenseLabels does).
std::vector<std::vector<int64_t>> DenseMatrix(const compare::AgreementStats& stats,
                                              const std::vector<int64_t>& labels);

// report.json's "agreements", one entry per classifier output, and back (none when absent;
// throws BadField).
nlohmann::json AgreementsJson(const gate::CompareReport& report);
std::vector<gate::AgreementRecord> AgreementsFromJson(const JsonFields& report);

// (agreement checks, failed agreement checks).
std::pair<size_t, size_t> AgreementCheckCounts(const gate::CompareReport& report);

// The console's agreement section ("" when no output was a classifier output).
std::string AgreementSection(const gate::CompareReport& report, bool color);
// "; 1 of 2 agreement checks failed" for the verdict line ("" when there are no checks).
std::string AgreementVerdictSuffix(const gate::CompareReport& report);

// (testcase name, failure lines) per agreement check; the lines are empty for a pass.
std::vector<std::pair<std::string, std::vector<std::string>>> AgreementCases(
    const gate::CompareReport& report);

// "2 agreement check(s): 1 failed" for verify_result.json's e2e_detail ("" when there are none).
std::string AgreementDetail(const gate::CompareReport& report);

}  // namespace convgate::report::internal
