#include "convgate/session/side.h"

#include <algorithm>
#include <chrono>
#include <regex>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "convgate/backends/registry.h"
#include "convgate/backends/releasable.h"
#include "convgate/core/command_line.h"
#include "convgate/core/file_util.h"
#include "convgate/core/redact.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/io/npy.h"
#include "convgate/io/tensor_proto.h"
#include "convgate/io/test_case.h"
#include "session/elapsed.h"

namespace convgate::session {
namespace {

namespace fs = std::filesystem;

bool HasNpyFiles(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".npy") return true;
  }
  return false;
}

Result<ResolvedSide> ResolveDirectory(const fs::path& path) {
  if (io::IsTestCasePath(path))
    return ResolvedSide{SideKind::kOutputs, path, "onnx-test-case", "outputs"};
  if (HasNpyFiles(path)) return ResolvedSide{SideKind::kOutputs, path, "npy-folder", "outputs"};
  return Status::InvalidArgument(
      path.string() + " is a folder with neither test_data_set_N folders nor .npy files");
}

// numpy's np.savez(file, a, b) names members arr_0, arr_1, ...: such files carry no names, so
// they are matched by position to the other side's outputs.
bool AllPositionalNames(const TensorMap& tensors) {
  static const std::regex kPositional("arr_[0-9]+");
  if (tensors.empty()) return false;
  for (const auto& entry : tensors) {
    if (!std::regex_match(entry.name, kPositional)) return false;
  }
  return true;
}

// One sample of one output that the file does not name: it is called after the file ("logits"
// for logits.npy) until it is matched by position to the other side's.
Result<std::vector<TensorMap>> LoadLoneNpy(const fs::path& path, const Limits& limits) {
  CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, io::ReadNpy(path, limits));
  std::vector<TensorMap> samples(1);
  samples[0].InsertOrAssign(path.stem().string(), std::move(tensor));
  return samples;
}

// Output names for a test case: the other side's, else those of the model.onnx in the case folder.
Result<io::TestCaseNames> TestCaseNamesFor(const fs::path& path, const Signature* names) {
  io::TestCaseNames result;
  Signature from_case;
  if (names == nullptr) {
    fs::path model = io::TestCaseModelPath(path);
    if (!model.empty()) {
      CONVGATE_ASSIGN_OR_RETURN(graph::ModelSummary summary, graph::SummarizeOnnxModel(model));
      from_case = std::move(summary.signature);
      names = &from_case;
    }
  }
  if (names != nullptr) {
    for (const TensorInfo& info : names->inputs) result.inputs.push_back(info.name);
    for (const TensorInfo& info : names->outputs) result.outputs.push_back(info.name);
  }
  return result;
}

// ONNX 1.12 writes bfloat16 test data as UINT16 TensorProtos (docs/architecture.md, Pitfalls):
// where the model declares bfloat16 and the file holds uint16, the bits are bfloat16, read so.
Status ApplyBFloat16Quirk(TensorMap& tensors, const std::vector<TensorInfo>& declared) {
  for (const TensorInfo& info : declared) {
    Tensor* tensor = tensors.Find(info.name);
    if (tensor == nullptr || info.dtype != DType::kBFloat16 || tensor->dtype() != DType::kUInt16) {
      continue;
    }
    CONVGATE_ASSIGN_OR_RETURN(*tensor, io::ReinterpretAs(std::move(*tensor), DType::kBFloat16));
  }
  return Status::OK();
}

Result<SavedOutputs> LoadTestCaseOutputs(const fs::path& path, const Signature* names,
                                         const Limits& limits) {
  CONVGATE_ASSIGN_OR_RETURN(io::TestCaseNames case_names, TestCaseNamesFor(path, names));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> sets,
                            io::ReadTestCase(path, case_names, /*load_outputs=*/true, limits));
  SavedOutputs saved;
  inputs::Dataset dataset;
  dataset.origin = path.string();
  for (io::TestDataSet& set : sets) {
    if (set.outputs.empty()) {
      return Status::DataLoss(set.dir.string() + " has no output_K.pb files to compare");
    }
    if (names != nullptr) {
      CONVGATE_RETURN_IF_ERROR(ApplyBFloat16Quirk(set.inputs, names->inputs));
      CONVGATE_RETURN_IF_ERROR(ApplyBFloat16Quirk(set.outputs, names->outputs));
    }
    saved.samples.push_back(std::move(set.outputs));
    dataset.samples.push_back(std::move(set.inputs));
  }
  // A test case always carries its inputs, even none at all (a Constant node takes no input).
  saved.inputs = std::move(dataset);
  return saved;
}

}  // namespace

Result<ResolvedSide> ResolveSide(const std::string& spec, const std::string& backend_override) {
  const fs::path path(spec);
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(spec + ": no such file or folder");
  if (fs::is_directory(path, ec)) {
    // A model folder (a Hugging Face folder: config.json and weights) runs on its backend, or on
    // an exec command that takes folders; any folder does on exec (a TensorFlow SavedModel run by
    // examples/exec/tf_savedmodel_runner.py).
    Result<std::string> folder_backend = backends::DefaultBackendFor(path);
    if (!folder_backend.ok() && backend_override == "exec") {
      return ResolvedSide{SideKind::kModel, path, "folder", "exec"};
    }
    if (folder_backend.ok() && (backend_override.empty() || backend_override == *folder_backend ||
                                backend_override == "exec")) {
      return ResolvedSide{SideKind::kModel, path, "hf-folder",
                          backend_override.empty() ? *folder_backend : backend_override};
    }
    if (!backend_override.empty() && backend_override != "outputs") {
      return Status::InvalidArgument(spec + " is a folder; backend '" + backend_override +
                                     "' runs model files");
    }
    return ResolveDirectory(path);
  }
  const std::string ext = path.extension().string();
  // An explicit model backend makes any file a model: an exec runner may take weights in an .npz.
  const bool saved_ext = ext == ".npz" || ext == ".npy" || ext == ".safetensors";
  const bool saved_by_extension = backend_override.empty() && saved_ext;
  if (backend_override == "outputs" || saved_by_extension) {
    if (!saved_ext) {
      return Status::InvalidArgument(
          spec + ": saved outputs must be an .npz, a .safetensors, an .npy or a folder");
    }
    return ResolvedSide{SideKind::kOutputs, path, ext.substr(1), "outputs"};
  }
  std::string backend = backend_override;
  if (backend.empty()) {
    CONVGATE_ASSIGN_OR_RETURN(backend, backends::DefaultBackendFor(path));
  }
  return ResolvedSide{SideKind::kModel, path, ext.empty() ? "unknown" : ext.substr(1), backend};
}

Result<ResolvedSide> ResolveForWorkflow(const SideRequest& request, SideRecord& record,
                                        GateError& error) {
  const auto failed = [&](Stage stage, Status status) -> Result<ResolvedSide> {
    if (!request.context.empty()) status = status.WithContext(request.context);
    error = GateError{stage, status};
    return status;
  };
  Result<ResolvedSide> side = ResolveSide(request.spec, request.backend);
  if (!side.ok()) {
    const bool missing = side.status().code() == StatusCode::kNotFound;
    return failed(missing ? Stage::kLoad : Stage::kFlags, side.status());
  }
  if (side->kind != SideKind::kModel && !request.needs_model.empty()) {
    return failed(Stage::kFlags, Status::InvalidArgument(request.spec + " holds saved tensors, " +
                                                         request.needs_model));
  }
  DescribeSide(*side, record, request.hash);
  return side;
}

std::optional<GateError> OpenSide(const SideRequest& request, Side& side) {
  GateError error;
  Result<ResolvedSide> resolved = ResolveForWorkflow(request, *side.record, error);
  if (!resolved.ok()) return error;
  side.resolved = std::move(resolved).value();
  if (side.resolved.kind != SideKind::kModel) return std::nullopt;
  Result<LoadedModel> loaded =
      LoadModel(side.resolved, *request.factory, request.load, *side.record, request.defer_session);
  if (!loaded.ok()) {
    Status status = loaded.status();
    if (!request.context.empty()) status = status.WithContext(request.context);
    return GateError{Stage::kLoad, status};
  }
  side.model = std::move(loaded).value();
  side.deferred = side.model->deferred;
  return std::nullopt;
}

void DescribeSide(const ResolvedSide& side, SideRecord& record, bool hash) {
  record.path = side.path.string();
  record.kind = side.kind == SideKind::kModel ? "model" : "outputs";
  record.format = side.format;
  record.backend = side.backend;
  if (hash) record.sha256 = SideSha256(side.path);
}

std::string SideSha256(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";
  Result<std::string> digest = Sha256File(path);
  return digest.ok() ? *digest : "";
}

void ReleaseFreedMemory() {
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

void MapLargeBlocksApart() {
#if defined(__GLIBC__)
  constexpr int kThresholdBytes = 1 << 20;
  ::mallopt(M_MMAP_THRESHOLD, kThresholdBytes);
#endif
}

backends::LoadOptions SideLoadOptions(const DataOptions& data, const ExecOptions& exec) {
  backends::LoadOptions options;
  options.intra_op_threads = exec.threads.value_or(data.threads);
  options.inter_op_threads = exec.inter_op_threads.value_or(data.inter_op_threads);
  options.graph_optimization = exec.graph_optimization.value_or(data.graph_optimization);
  options.new_tokens = data.new_tokens;
  options.present_key_values = data.present_key_values;
  options.limits = data.limits;
  options.exec_argv = exec.argv;
  options.timeout_seconds = exec.timeout_seconds;
  return options;
}

void RecordBackendLog(const LoadedModel& model, SideRecord& record) {
  record.backend_log = model.model->last_log();
}

Result<LoadedModel> LoadModel(const ResolvedSide& side, backends::BackendFactory& factory,
                              const backends::LoadOptions& options, SideRecord& record,
                              bool defer_session) {
  const auto start = std::chrono::steady_clock::now();
  LoadedModel loaded;
  CONVGATE_ASSIGN_OR_RETURN(loaded.backend, factory.Create(side.backend));
  record.backend_version = loaded.backend->version();
  // What report.json shows of the command: without a password it may carry (core/redact.h).
  if (side.backend == "exec") {
    record.backend_command = RedactPasswords(JoinCommandLine(options.exec_argv));
  }
  auto* deferring =
      defer_session ? dynamic_cast<backends::DeferringBackend*>(loaded.backend.get()) : nullptr;
  CONVGATE_ASSIGN_OR_RETURN(loaded.model, deferring ? deferring->LoadDeferred(side.path, options)
                                                    : loaded.backend->Load(side.path, options));
  loaded.deferred = deferring != nullptr;
  record.load_seconds = SecondsSince(start);
  record.backend_settings = loaded.model->settings();
  for (const TensorInfo& info : loaded.model->signature().outputs) {
    record.output_names.push_back(info.name);
  }
  return loaded;
}

Result<SavedOutputs> LoadSavedOutputs(const ResolvedSide& side, const Signature* names,
                                      const Limits& limits, SideRecord& record) {
  const auto start = std::chrono::steady_clock::now();
  SavedOutputs saved;
  if (side.format == "onnx-test-case") {
    CONVGATE_ASSIGN_OR_RETURN(saved, LoadTestCaseOutputs(side.path, names, limits));
  } else if (side.format == "npy") {
    CONVGATE_ASSIGN_OR_RETURN(saved.samples, LoadLoneNpy(side.path, limits));
    saved.positional = true;
  } else {
    // The dataset layouts (flat npz, sample_<i>/ npz, folder of .npy) are the same for outputs as
    // for inputs.
    CONVGATE_ASSIGN_OR_RETURN(inputs::Dataset dataset,
                              inputs::LoadDataset(side.path, Signature{}, limits));
    saved.samples = std::move(dataset.samples);
    saved.positional = std::all_of(saved.samples.begin(), saved.samples.end(), AllPositionalNames);
  }
  record.load_seconds = SecondsSince(start);
  if (!saved.samples.empty()) record.output_names = saved.samples.front().Names();
  return saved;
}

}  // namespace convgate::session
