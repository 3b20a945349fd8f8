#include "convgate/store/job_fields.h"

namespace convgate::store {

const std::vector<JobField>& JobFields() {
  // The order of schema version 1's columns, then what versions 2, 3 and 4 added: the stores'
  // SELECT reads them by position.
  static const std::vector<JobField> kFields = {
      {"entry_id", "entry_id", &JobRecord::entry_id},
      {"entry_key", "entry_key", &JobRecord::entry_key},
      {"model_id", "model_id", &JobRecord::model_id},
      {"model_path", "model_path", &JobRecord::model_path},
      {"model_sha256", "model_sha256", &JobRecord::model_sha256},
      {"model_type", "model_type", &JobRecord::model_type},
      {"model_type_source", "model_type_source", &JobRecord::model_type_source},
      {"command", "command", &JobRecord::command},
      {"conversion", "conversion", &JobRecord::conversion},
      {"conversion_path", "conversion_path", &JobRecord::conversion_path},
      {"verdict", "verdict", &JobRecord::verdict},
      {"exit_code", "exit_code", &JobRecord::exit_code},
      {"signal", "signal", &JobRecord::signal},
      {"duration_seconds", "seconds", &JobRecord::duration_seconds},
      {"error_category", "error_category", &JobRecord::error_category},
      {"error_text", "error", &JobRecord::error_text},
      {"result_dir", "result_dir", &JobRecord::result_dir},
      {"finished_at", "finished_at", &JobRecord::finished_at},
      {"model_origin", "model_origins", &JobRecord::model_origin, /*json_text=*/true},
      {"conversion_params", "conversion_params", &JobRecord::conversion_params},
      {"converter_version", "converter_version", &JobRecord::converter_version},
      {"p50_ms", "p50_ms", &JobRecord::p50_ms},
      {"p50_low_ms", "p50_low_ms", &JobRecord::p50_low_ms},
      {"p50_high_ms", "p50_high_ms", &JobRecord::p50_high_ms},
      {"p99_ms", "p99_ms", &JobRecord::p99_ms},
      {"throughput", "throughput", &JobRecord::throughput},
      {"peak_rss_bytes", "peak_rss_bytes", &JobRecord::peak_rss_bytes},
      {"source_p50_ms", "source_p50_ms", &JobRecord::source_p50_ms},
      {"speedup", "speedup", &JobRecord::speedup},
      {"speedup_low", "speedup_low", &JobRecord::speedup_low},
      {"speedup_high", "speedup_high", &JobRecord::speedup_high},
      {"load_average", "load_average", &JobRecord::load_average},
  };
  return kFields;
}

std::string JobColumnList(std::string_view alias) {
  std::string list;
  for (const JobField& field : JobFields()) {
    list += (list.empty() ? "" : ", ") + std::string(alias) + field.column;
  }
  return list;
}

}  // namespace convgate::store
