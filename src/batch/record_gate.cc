#include "convgate/batch/record_gate.h"

#include "convgate/batch/batch.h"
#include "convgate/batch/job_policy.h"
#include "convgate/core/exit_code.h"
#include "convgate/core/file_util.h"
#include "convgate/report/json_text.h"

namespace convgate::batch {
namespace {

std::string Joined(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

// The documented exit codes as a job's verdict and category (runner.cc's Classify for a child
// that exited; report.json's error stage refines "cannot-run").
void ClassifyExit(int exit_code, store::JobRecord& job) {
  job.exit_code = exit_code;
  if (exit_code == static_cast<int>(ExitCode::kPassed)) {
    job.verdict = Verdict::kPass;
  } else if (exit_code == static_cast<int>(ExitCode::kFailed)) {
    job.verdict = Verdict::kFail;
  } else {
    job.verdict = Verdict::kError;
    job.error_category = ErrorCategoryOfExit(exit_code);
  }
}

}  // namespace

std::string DefaultEntryId(const std::filesystem::path& model) {
  std::string id = model.stem().string();
  if (id.empty()) id = model.filename().string();
  for (char& c : id) {
    const bool allowed =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!allowed) c = '_';
  }
  return id.empty() ? "model" : id;
}

store::JobRecord GateJob(const GateRecord& gate, const nlohmann::json& report,
                         const nlohmann::json& verify_result) {
  store::JobRecord job;
  job.entry_id = gate.entry_id.empty() ? DefaultEntryId(gate.model) : gate.entry_id;
  job.model_id = job.entry_id;
  job.model_path = gate.model.string();
  // A folder model (saved outputs, a SavedModel) has no one sha256: "" as the batch records it.
  std::error_code ec;
  if (std::filesystem::is_regular_file(gate.model, ec)) {
    Result<std::string> sha = Sha256File(gate.model);
    if (sha.ok()) job.model_sha256 = *sha;
  }
  job.model_type = gate.model_type;
  job.model_type_source = gate.model_type.empty() ? "none" : "flag";
  job.command = gate.command;
  job.conversion = gate.conversion;
  job.conversion_params = store::CanonicalParams(gate.conversion_params);
  // The key --resume of a batch would compare: one gate is one entry of its own command line.
  job.entry_key = "gate:" + Sha256Hex(Joined(gate.argv) + '\0' + job.model_sha256);
  ClassifyExit(gate.exit_code, job);
  job.duration_seconds = gate.seconds;
  job.result_dir = gate.out_dir;
  ReadJobJson(verify_result.is_object() ? &verify_result : nullptr,
              report.is_object() ? &report : nullptr, gate.command, job);
  if (report.is_object() && report.contains("model_origins")) {
    job.model_origin = report::DumpJson(report["model_origins"]);
  }
  job.finished_at = NowIso8601();
  return job;
}

Status RecordGate(const GateRecord& gate, const nlohmann::json& report,
                  const nlohmann::json& verify_result) {
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store,
                            store::Store::Open({gate.store_location}));
  const std::string version = VersionText();
  // The run's manifest is the command: a single gate has none, and history tells them apart.
  CONVGATE_ASSIGN_OR_RETURN(const int64_t run_id,
                            store->BeginRun({"(" + gate.command + ")", HostName(), version, "",
                                             Joined(gate.argv), gate.started_at}));
  CONVGATE_RETURN_IF_ERROR(store->RecordJob(run_id, GateJob(gate, report, verify_result)));
  return store->EndRun(run_id, NowIso8601());
}

}  // namespace convgate::batch
