// The results store under load (bench/batch.sh): RecordJob's cost per job (one transaction: the
// job row and its output rows), and a store of N job rows for timing `convgate history` on it.
//
// Usage: convgate-store-bench DB JOBS [ENTRIES]
// Writes JOBS jobs (ENTRIES entries, default 1000, each run JOBS/ENTRIES times; 2 outputs per job;
// every 7th entry regresses in its last run) through the Store API, one RecordJob per job, and
// prints "record_job_ms_per_job <ms>" and "jobs <n>".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "convgate/store/store.h"

using convgate::store::JobRecord;
using convgate::store::OutputRecord;
using convgate::store::Store;

namespace {

JobRecord MakeJob(int entry, int run, int runs) {
  JobRecord job;
  job.entry_id = "model-" + std::to_string(entry);
  job.entry_key = job.entry_id + "-key-" + std::to_string(run);
  job.model_id = "org/" + job.entry_id;
  job.model_path = "/zoo/" + job.entry_id + "/model.onnx";
  job.model_sha256 = std::string(64, 'a');
  job.model_type = "bert";
  job.model_type_source = "config.json";
  job.command = "verify";
  job.conversion = "to:fp16";
  job.conversion_path = "onnx -> fp16";
  const bool regressed = entry % 7 == 0 && run == runs - 1;
  job.verdict = regressed ? "fail" : "pass";
  job.exit_code = regressed ? 1 : 0;
  job.duration_seconds = 1.5;
  job.result_dir = "/out/" + job.entry_id;
  char when[32];
  std::snprintf(when, sizeof(when), "2026-11-%02dT%02d:00:00Z", 1 + run / 24 % 28, run % 24);
  job.finished_at = when;
  for (const char* name : {"logits", "pooler"}) {
    OutputRecord output;
    output.output = name;
    output.verdict = job.verdict;
    output.max_abs_error = regressed ? 0.5 : 1e-4 * (1 + run % 5);
    output.mean_abs_error = 1e-5;
    output.mismatches = regressed ? 12 : 0;
    output.cosine = 0.99999;
    output.snr_db = 80.0;
    output.worst_index = "[0, 3]";
    job.outputs.push_back(output);
  }
  return job;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: convgate-store-bench DB JOBS [ENTRIES]\n");
    return 2;
  }
  const int jobs = std::atoi(argv[2]);
  const int entries = argc > 3 ? std::atoi(argv[3]) : 1000;
  const int runs = std::max(1, jobs / entries);
  auto store = Store::Open({argv[1]});
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 3;
  }
  const auto start = std::chrono::steady_clock::now();
  int written = 0;
  for (int run = 0; run < runs; ++run) {
    auto run_id = (*store)->BeginRun(
        {"bench.yaml", "bench", "bench", "", "convgate batch", "2026-11-01T00:00:00Z"});
    if (!run_id.ok()) return 3;
    for (int entry = 0; entry < entries && written < jobs; ++entry, ++written) {
      convgate::Status recorded = (*store)->RecordJob(*run_id, MakeJob(entry, run, runs));
      if (!recorded.ok()) {
        std::fprintf(stderr, "%s\n", recorded.ToString().c_str());
        return 3;
      }
    }
    if (!(*store)->EndRun(*run_id, "2026-11-01T01:00:00Z").ok()) return 3;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("record_job_ms_per_job %.4f\njobs %d\n", seconds * 1000.0 / written, written);
  return 0;
}
