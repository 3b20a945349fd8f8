#include "backends/onnxruntime/ort_model.h"

#include <algorithm>
#include <set>

#include "backends/check_inputs.h"
#include "backends/onnxruntime/ort_env.h"
#include "backends/onnxruntime/ort_run_timeout.h"
#include "backends/onnxruntime/ort_session.h"
#include "backends/onnxruntime/ort_tensor.h"
#include "convgate/core/file_util.h"
#include "convgate/core/scratch_file.h"
#include "convgate/core/temp_dir.h"
#include "convgate/core/units.h"
#include "convgate/core/utf8.h"
#include "convgate/graph/internal/bfloat16_emulation.h"
#include "convgate/graph/internal/external_data.h"
#include "convgate/graph/internal/model_proto.h"
#include "convgate/graph/onnx_model.h"

namespace convgate::backends {
namespace {

// Each intermediate-value session holds its own copy of the weights, so only one is kept:
// per-node comparison asks for one chunk of names after another (every sample of a chunk before
// the next chunk) and never returns to old ones. Keeping two raised per-node peak RSS on resnet18
// from 1.6x to 2.1x that of a plain compare (bench/per_node.sh).
constexpr size_t kMaxCachedSessions = 1;

// ORT reports a missing side file as a generic failure; this names it and is NotFound. ORT reads
// the files itself, so one that is a FIFO or a device (a location of "/dev/zero") is refused here.
Status CheckExternalDataFiles(const std::filesystem::path& model_path,
                              const std::vector<std::string>& files) {
  for (const std::string& file : files) {
    const std::filesystem::path path = model_path.parent_path() / file;
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
      return Status::NotFound(model_path.string() + ": external data file " + path.string() +
                              " does not exist");
    }
    Status regular = CheckRegularFile(path);
    if (!regular.ok()) return regular.WithContext(model_path.string() + ": external data file");
  }
  return Status::OK();
}

// ONNX Runtime takes and reports names as C strings: a name holding a NUL byte would be cut there,
// and convgate would feed or ask for a tensor the model does not have. ONNX allows such a name (a
// protobuf string is bytes), so this is a model ONNX Runtime cannot run as declared, not a bug.
Status CheckNoNulInNames(const std::vector<TensorInfo>& values, std::string_view what,
                         const std::filesystem::path& model_path) {
  for (size_t value_idx = 0; value_idx < values.size(); ++value_idx) {
    const std::string& name = values[value_idx].name;
    const size_t nul = name.find('\0');
    if (nul == std::string::npos) continue;
    return Status::Unimplemented(
        model_path.string() + ": " + std::string(what) + " " + std::to_string(value_idx) +
        "'s name contains a NUL byte ('" + EscapeForDisplay(name) +
        "'): ONNX Runtime takes names as C strings and would truncate it to '" +
        EscapeForDisplay(name.substr(0, nul)) + "'; rename it in the model");
  }
  return Status::OK();
}

}  // namespace

Result<OrtModel::FileStamp> OrtModel::StampOf(const std::filesystem::path& path) {
  std::error_code error;
  FileStamp stamp;
  stamp.size = std::filesystem::file_size(path, error);
  if (!error) stamp.mtime = std::filesystem::last_write_time(path, error);
  if (error) {
    Status status(error == std::errc::no_such_file_or_directory ? StatusCode::kNotFound
                                                                : StatusCode::kUnavailable,
                  "cannot open " + path.string() + ": " + error.message());
    return status;
  }
  return stamp;
}

Result<std::unique_ptr<OrtModel>> OrtModel::Load(const std::filesystem::path& model_path,
                                                 const LoadOptions& options, bool defer_session) {
  if (options.intra_op_threads < 0) {
    return Status::InvalidArgument("intra_op_threads must be >= 0, got " +
                                   std::to_string(options.intra_op_threads));
  }
  std::unique_ptr<OrtModel> model(new OrtModel());
  model->path_ = model_path;
  model->options_ = options;
  CONVGATE_ASSIGN_OR_RETURN(model->env_, GetOrtEnv());
  // Before the stamp, which cannot take the size of a FIFO or a device and would say so vaguely.
  CONVGATE_RETURN_IF_ERROR(CheckRegularFile(model_path));
  CONVGATE_ASSIGN_OR_RETURN(model->stamp_, StampOf(model_path));
  // The summary parses the file as it reads it and is dropped before ORT reads the file itself,
  // so the model is held once at a time; the stamp, checked again after, says both read the same
  // file. A session for intermediate values re-reads the file, checking the stamp first.
  graph::ModelSummary summary;
  CONVGATE_ASSIGN_OR_RETURN(summary, graph::SummarizeOnnxModelStructure(model_path));
  model->signature_ = std::move(summary.signature);
  model->has_external_data_ = summary.has_external_data;
  model->emulate_bfloat16_ = summary.uses_bfloat16;
  CONVGATE_RETURN_IF_ERROR(CheckExternalDataFiles(model_path, summary.external_data_files));
  CONVGATE_RETURN_IF_ERROR(CheckNoNulInNames(model->signature_.inputs, "input", model_path));
  CONVGATE_RETURN_IF_ERROR(CheckNoNulInNames(model->signature_.outputs, "output", model_path));
  if (defer_session) return model;  // Prepare or the first Run builds it
  CONVGATE_ASSIGN_OR_RETURN(model->session_, model->CreateSessionFromFile());
  CONVGATE_RETURN_IF_ERROR(model->CheckUnchanged("load it again"));
  CONVGATE_RETURN_IF_ERROR(
      CheckSessionMatchesGraph(*model->session_, model->signature_, model_path));
  model->session_checked_ = true;
  return model;
}

Status OrtModel::Prepare() {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return PlainSession().status();
}

void OrtModel::Release() {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  // Destroying a session returns its arena too: ONNX Runtime gives arena memory back only then.
  session_.reset();
  cache_.clear();
}

Result<TensorMap> OrtModel::Run(const TensorMap& inputs,
                                const std::vector<std::string>& output_names) {
  CONVGATE_RETURN_IF_ERROR(CheckDeclaredInputs(signature_, inputs, path_));
  std::vector<std::string> names = output_names;
  if (names.empty()) {
    for (const TensorInfo& output : signature_.outputs) names.push_back(output.name);
  }
  CONVGATE_RETURN_IF_ERROR(CheckOutputNames(names));
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<Ort::Session> session, SessionFor(names));
  return RunSession(*session, inputs, names);
}

Status OrtModel::CheckOutputNames(const std::vector<std::string>& names) const {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (!seen.insert(name).second) {
      return Status::InvalidArgument(path_.string() + ": output '" + name + "' requested twice");
    }
  }
  return CheckOutputsHoldable(signature_, names, path_);
}

Result<std::shared_ptr<Ort::Session>> OrtModel::SessionFor(const std::vector<std::string>& names) {
  std::vector<std::string> extra;
  for (const std::string& name : names) {
    if (signature_.FindOutput(name) == nullptr) extra.push_back(name);
  }
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (extra.empty()) return PlainSession();
  std::sort(extra.begin(), extra.end());
  for (auto cached = cache_.begin(); cached != cache_.end(); ++cached) {
    if (cached->extra_outputs != extra) continue;
    cache_.splice(cache_.begin(), cache_, cached);
    return cache_.front().session;
  }
  // Evict before creating, so a full cache never holds one session (and weight copy) too many.
  // The plain session goes too: every session holds its own copy of the weights, and per-node
  // validation (which asks for intermediates) runs after the outputs are compared. Keeping it
  // doubled per-node's peak; it is rebuilt from the file if plain outputs are asked for again
  // (not served by an intermediate session: marking outputs can change ORT's fusions, and so the
  // outputs' last bits).
  while (cache_.size() >= kMaxCachedSessions) cache_.pop_back();
  session_.reset();
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<Ort::Session> session,
                            CreateIntermediateSession(extra));
  cache_.push_front(CachedSession{std::move(extra), session});
  return session;
}

Result<std::shared_ptr<Ort::Session>> OrtModel::PlainSession() {
  if (session_) return session_;
  cache_.clear();  // the intermediate sessions that displaced it
  CONVGATE_RETURN_IF_ERROR(CheckUnchanged("load it again"));
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<Ort::Session> session, CreateSessionFromFile());
  if (!session_checked_) {  // deferred at Load: the checks Load would have made
    CONVGATE_RETURN_IF_ERROR(CheckUnchanged("load it again"));
    CONVGATE_RETURN_IF_ERROR(CheckSessionMatchesGraph(*session, signature_, path_));
    session_checked_ = true;
  }
  session_ = std::move(session);
  return session_;
}

Status OrtModel::CheckUnchanged(std::string_view what_to_do) const {
  CONVGATE_ASSIGN_OR_RETURN(FileStamp stamp, StampOf(path_));
  if (stamp == stamp_) return Status::OK();
  return Status::FailedPrecondition(path_.string() + " changed on disk since it was read; " +
                                    std::string(what_to_do));
}

Result<std::shared_ptr<Ort::Session>> OrtModel::CreateIntermediateSession(
    const std::vector<std::string>& extra_outputs) {
  CONVGATE_RETURN_IF_ERROR(CheckUnchanged("load it again to fetch intermediate values"));
  if (emulate_bfloat16_) return CreateEmulatedSession(extra_outputs);
  // ORT finds external data beside the file it loads, so such a model is marked in memory and
  // loaded from bytes, given its own folder.
  if (has_external_data_) {
    CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path_));
    CONVGATE_ASSIGN_OR_RETURN(std::string marked, graph::WithOutputs(bytes, extra_outputs, path_));
    bytes.clear();
    bytes.shrink_to_fit();
    return CreateOrtSession(*env_, marked, SessionConfig());
  }
  Result<std::shared_ptr<Ort::Session>> referencing = CreateReferencingSession(extra_outputs);
  if (referencing.ok()) return referencing;
  // Otherwise a copy of the file with the outputs appended (graph::OutputsSuffix), which ORT
  // parses as it reads: the bytes, a parse and a serialized copy of the model are never held
  // beside ORT's own.
  CONVGATE_ASSIGN_OR_RETURN(std::string suffix, graph::OutputsSuffix(path_, extra_outputs));
  CONVGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("marked"));
  const std::filesystem::path marked = dir.path() / "marked.onnx";
  CONVGATE_RETURN_IF_ERROR(WriteScratchFile(marked, suffix, path_));
  CONVGATE_RETURN_IF_ERROR(CheckUnchanged("load it again to fetch intermediate values"));
  return CreateOrtSessionFromFile(*env_, SessionConfig(), marked);
}

Result<std::shared_ptr<Ort::Session>> OrtModel::CreateSessionFromFile() const {
  if (emulate_bfloat16_) return CreateEmulatedSession({});
  Result<std::shared_ptr<Ort::Session>> referencing = CreateReferencingSession({});
  if (referencing.ok()) return referencing;
  return CreateOrtSessionFromFile(*env_, SessionConfig());  // and ORT's own errors
}

Result<std::shared_ptr<Ort::Session>> OrtModel::CreateReferencingSession(
    const std::vector<std::string>& extra_outputs) const {
  if (has_external_data_) {
    return Status::Unimplemented(path_.string() + ": keeps its weights in external data already");
  }
  // ORT reads external data only inside the folder given, symbolic links resolved: a model in
  // the Hugging Face cache is a link to a blob in another folder.
  std::error_code error;
  const std::filesystem::path file = std::filesystem::canonical(path_, error);
  if (error) return Status::Unavailable(path_.string() + ": " + error.message());
  CONVGATE_ASSIGN_OR_RETURN(
      std::string structure,
      graph::WithOutputsReferencingWeights(file, extra_outputs, file.filename().string()));
  OrtSessionConfig config = SessionConfig();
  config.has_external_data = true;  // found in the model's folder: the model file itself
  config.external_data_folder = file.parent_path();
  return CreateOrtSession(*env_, structure, config);
}

Result<std::shared_ptr<Ort::Session>> OrtModel::CreateEmulatedSession(
    const std::vector<std::string>& extra_outputs) const {
  int64_t size = 0;
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::ParseModelProtoFile(path_, &size));
  if (has_external_data_) {  // widened in memory: the emulated model holds its weights
    CONVGATE_RETURN_IF_ERROR(graph::AnchorExternalData(model, path_));
    CONVGATE_RETURN_IF_ERROR(graph::ForEachTensor(
        *model.mutable_graph(),
        [](onnx::TensorProto& tensor) { return graph::LoadExternalData(tensor); }));
  }
  CONVGATE_RETURN_IF_ERROR(graph::EmulateBfloat16(model, path_).status());
  CONVGATE_RETURN_IF_ERROR(graph::AddOutputs(model, extra_outputs, path_).status());
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return Status::Unimplemented(path_.string() +
                                 ": the bfloat16 emulation is over protobuf's 2 GB limit");
  }
  model.Clear();
  return CreateOrtSession(*env_, bytes, SessionConfig());
}

Status OrtModel::TimedOut(double seconds) const {
  return Status::Unavailable(path_.string() + ": timed out after " + FormatDuration(seconds) +
                             " (--run-timeout); ONNX Runtime stopped the run");
}

Result<TensorMap> OrtModel::RunSession(Ort::Session& session, const TensorMap& inputs,
                                       const std::vector<std::string>& names) const {
  try {
    std::vector<const char*> input_names;
    std::vector<Ort::Value> input_values;
    for (const TensorInfo& declared : signature_.inputs) {
      input_names.push_back(declared.name.c_str());
      input_values.push_back(OrtInputValue(*inputs.Find(declared.name)));
    }
    std::vector<const char*> output_names;
    for (const std::string& name : names) output_names.push_back(name.c_str());
    // Kernel failures come back as the exception turned into our Status below; at ERROR level
    // ORT would also print the same message to stderr.
    Ort::RunOptions run_options;
    run_options.SetRunLogSeverityLevel(ORT_LOGGING_LEVEL_FATAL);
    std::vector<Ort::Value> values;
    {
      const double timeout = options_.limits.run_timeout_seconds;
      OrtRunTimeout watchdog([&run_options] { run_options.SetTerminate(); }, timeout);
      try {
        values = session.Run(run_options, input_names.data(), input_values.data(),
                             input_values.size(), output_names.data(), output_names.size());
      } catch (const Ort::Exception&) {
        if (watchdog.fired()) return TimedOut(timeout);
        throw;
      }
    }
    TensorMap outputs;
    for (size_t output_idx = 0; output_idx < names.size(); ++output_idx) {
      Result<Tensor> tensor = TensorFromOrtValue(std::move(values[output_idx]), names[output_idx]);
      if (!tensor.ok()) return tensor.status().WithContext(path_.string());
      CONVGATE_RETURN_IF_ERROR(outputs.Insert(names[output_idx], std::move(tensor).value()));
    }
    return outputs;
  } catch (const Ort::Exception& error) {
    return Status::Unavailable("ONNX Runtime failed running " + path_.string() + ": " +
                               CleanOrtMessage(error.what()));
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("ONNX Runtime failed running " + path_.string() + ": out of memory");
  }
}

}  // namespace convgate::backends
