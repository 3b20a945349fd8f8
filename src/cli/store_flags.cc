// --store, --id and --model-type of run, compare, verify and bench, and recording the finished gate
// in that store. --model-type also steers hub exports (cli/hf_sources.cc, gate::VerifyOptions).
#include <iostream>

#include "cli/command.h"
#include "convgate/batch/record_gate.h"

namespace convgate::cli {

void AddGateStoreFlags(FlagSet& flags, GateStoreOptions& options) {
  flags.SetGroup("Results store");
  flags.Add(TextFlag("--store", "PATH|URL",
                     "Also record this gate in a results store (a SQLite file, created when "
                     "missing, or a PostgreSQL URL) as a run of one job, for `convgate history`",
                     {"results/convgate.db"}, options.location));
  flags.Add(Flag{.name = "--id",
                 .value_name = "ID",
                 .help = "The entry id the store records (needs --store)",
                 .default_text = "the model's file name without extension",
                 .examples = {"resnet50-fp16"},
                 .apply = [&options](const std::string& value) -> Status {
                   if (value.empty()) return Status::InvalidArgument("--id is empty");
                   options.id = value;
                   return Status::OK();
                 }});
  flags.Add(Flag{.name = "--model-type",
                 .value_name = "TYPE",
                 .help = "The model's type, as a manifest entry's model_type: steers the task of "
                         "an export from PyTorch weights (an hf:// model the hub has no ONNX "
                         "file of, --to optimum-onnx/optimum-openvino: bert feature-extraction, "
                         "t5 text2text-generation, gpt text-generation, vit image-classification, "
                         "clip, whisper, wav2vec2), and --store records it",
                 .default_text = "none",
                 .examples = {"bert", "resnet"},
                 .apply = StoreNonEmpty("model type", options.model_type)});
  flags.AddCheck([&options](const FlagSet&) -> Status {
    if (!options.id.empty() && options.location.empty()) {
      return Status::InvalidArgument("--id names the entry in a results store: give --store too");
    }
    return Status::OK();
  });
}

ExitCode RecordInStore(const GateStoreOptions& store, const report::Invocation& invocation,
                       const OutputOptions& options, const Rendered& rendered, ExitCode exit_code) {
  const int code = ToInt(exit_code);
  if (store.location.empty() || exit_code == ExitCode::kUsage || code > 4) return exit_code;
  batch::GateRecord gate;
  gate.store_location = store.location;
  gate.entry_id = store.id;
  gate.command = invocation.command;
  gate.model = store.model;
  gate.conversion = store.conversion;
  gate.conversion_params = store.conversion_params;
  gate.model_type = store.model_type;
  gate.argv = invocation.argv;
  gate.out_dir = options.out_dir;
  gate.exit_code = code;
  gate.seconds = invocation.seconds;
  gate.started_at = invocation.started_at;
  Status recorded = batch::RecordGate(gate, rendered.report, rendered.verify_result);
  if (recorded.ok()) return exit_code;
  const ExitCode store_error = ReportError(gate::Stage::kWrite, recorded);
  // A gate that could not run keeps its own code; any other result becomes "could not record".
  return code >= 3 ? exit_code : store_error;
}

}  // namespace convgate::cli
