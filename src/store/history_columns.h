// The columns of a history row, in the order both stores' ReadHistoryRow read them: the run and
// job ids, the job's fields (job_fields.h), then the figures over its outputs; spelled once in SQL
// that SQLite and PostgreSQL both take.
#pragma once

#include <string>
#include <type_traits>
#include <variant>

#include "convgate/store/job_fields.h"
#include "convgate/store/store.h"

namespace convgate::store {

// Where the job's fields begin in a history row, and where the figures do.
inline constexpr int kFirstJobColumn = 2;
inline int FirstFigureColumn() { return kFirstJobColumn + static_cast<int>(JobFields().size()); }

// Sets each field of `job` from its column of a history row (kFirstJobColumn on, in JobFields()
// order): `text(i)`, `integer(i)` and `real(i)` read column i of the store's row.
template <typename Text, typename Integer, typename Real>
void ReadJobColumns(JobRecord& job, const Text& text, const Integer& integer, const Real& real) {
  int column = kFirstJobColumn;
  for (const JobField& field : JobFields()) {
    std::visit(
        [&](auto member) {
          auto& value = job.*member;
          using Value = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            value = text(column);
          } else if constexpr (std::is_same_v<Value, Verdict>) {
            // The table's CHECK admits only the three names.
            value = ParseVerdict(text(column)).value_or(Verdict::kError);
          } else if constexpr (std::is_same_v<Value, int>) {
            value = static_cast<int>(integer(column));
          } else {
            value = real(column);
          }
        },
        field.member);
    ++column;
  }
}

// The worst figures over a job's outputs (largest errors, total mismatches, smallest cosine and
// SNR, total non-finite elements), or typed NULLs when the query does not want them: the index
// lookups per row are most of the cost of reading 100,000 jobs (HistoryQuery::with_figures).
// Cosine and SNR are NULL, not the smallest of the other outputs', when an output's target
// introduced NaN or Inf: NaN is never agreement.
inline constexpr char kFigureColumns[] =
    "(SELECT MAX(o.max_abs_error) FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT MAX(o.mean_abs_error) FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT SUM(o.mismatches) FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT CASE WHEN SUM(o.introduced_non_finite) > 0 THEN NULL ELSE MIN(o.cosine) END "
    "FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT CASE WHEN SUM(o.introduced_non_finite) > 0 THEN NULL ELSE MIN(o.snr_db) END "
    "FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT SUM(o.non_finite) FROM outputs o WHERE o.job_id = j.id), "
    "(SELECT SUM(o.introduced_non_finite) FROM outputs o WHERE o.job_id = j.id)";
inline constexpr char kNoFigureColumns[] =
    "CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS DOUBLE PRECISION), "
    "CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS DOUBLE PRECISION), "
    "CAST(NULL AS DOUBLE PRECISION), CAST(NULL AS DOUBLE PRECISION), "
    "CAST(NULL AS DOUBLE PRECISION)";

// The columns of `alias` that tell a job's series (Latest, history --regressions), for GROUP BY:
// the entry, its model, the conversion and its parameters (the jobs_by_series index).
inline std::string SeriesColumns(const std::string& alias) {
  return alias + ".entry_id, " + alias + ".model_id, " + alias + ".conversion, " + alias +
         ".conversion_params";
}

// "SELECT <job columns>, <figure columns or NULLs>".
inline std::string SelectHistoryColumns(bool with_figures) {
  return "SELECT j.run_id, j.id, " + JobColumnList("j.") + ", " +
         (with_figures ? kFigureColumns : kNoFigureColumns);
}

// The INSERT of a job row: run_id then the job's fields, as numbered parameters spelled `mark`
// ("?" for SQLite, "$" for PostgreSQL) 1 to 1 + JobFields().size().
inline std::string InsertJobSql(char mark) {
  std::string values;
  for (size_t index = 1; index <= JobFields().size() + 1; ++index) {
    values += (index == 1 ? "" : ", ") + std::string(1, mark) + std::to_string(index);
  }
  return "INSERT INTO jobs (run_id, " + JobColumnList("") + ") VALUES (" + values + ")";
}

}  // namespace convgate::store
