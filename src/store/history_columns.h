// The columns of a history row, in the order both stores' ReadHistoryRow read them (0-22 the job,
// 23-29 the figures over its outputs), spelled once in SQL that SQLite and PostgreSQL both take.
#pragma once

#include <string>

#include "convgate/store/store.h"

namespace convgate::store {

inline constexpr char kJobColumns[] =
    "j.run_id, j.id, j.entry_id, j.entry_key, j.model_id, j.model_path, j.model_sha256, "
    "j.model_type, j.model_type_source, j.command, j.conversion, j.conversion_path, j.verdict, "
    "j.exit_code, j.signal, j.duration_seconds, j.error_category, j.error_text, j.result_dir, "
    "j.finished_at, j.model_origin, j.conversion_params, j.converter_version, ";

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
  return std::string("SELECT ") + kJobColumns + (with_figures ? kFigureColumns : kNoFigureColumns);
}

}  // namespace convgate::store
