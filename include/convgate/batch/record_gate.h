// `run`, `compare` and `verify` with `--store URL`: the gate's result recorded as a run of one job,
// so `convgate history` shows single gates beside batches.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/store/store.h"

namespace convgate::batch {

struct GateRecord {
  std::string store_location;   // --store
  std::string entry_id;         // --id, else DefaultEntryId(model)
  std::string command;          // "run", "compare", "verify"
  std::filesystem::path model;  // the source (run: the model)
  std::string conversion;       // as a manifest entry's: "to:fp16", "target:x.onnx", ""
  std::map<std::string, std::string> conversion_params;  // --param NAME=VALUE
  std::string model_type;         // --model-type: recorded with source "flag"; "" none
  std::vector<std::string> argv;  // the whole command line, for the run row and the key
  std::string out_dir;            // --out, "" when none
  int exit_code = 0;
  double seconds = 0.0;
  std::string started_at;  // ISO 8601 UTC
};

// The model's file name without its extension, in the characters a manifest id allows.
std::string DefaultEntryId(const std::filesystem::path& model);

// The job row the gate's documents give (verdict from the exit code, category from the report's
// error stage, per-output figures, the model's sha256); no store touched.
store::JobRecord GateJob(const GateRecord& gate, const nlohmann::json& report,
                         const nlohmann::json& verify_result);

// Opens the store, begins a run, records the job and ends the run. The store's errors, each
// naming it (Unavailable, FailedPrecondition for a newer schema, DataLoss for a non-database).
Status RecordGate(const GateRecord& gate, const nlohmann::json& report,
                  const nlohmann::json& verify_result);

}  // namespace convgate::batch
