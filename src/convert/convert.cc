// The conversion driver: resolve the converter, look in the cache, run with retries, check the
// output, publish it to the cache and copy it to where it was asked for.
#include "convgate/convert/convert.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <memory>
#include <optional>

#include "convert/converter.h"
#include "convert/key.h"
#include "convert/output.h"
#include "convert/retry.h"
#include "convgate/convert/cache.h"
#include "convgate/convert/kinds.h"
#include "convgate/core/file_util.h"
#include "convgate/core/interrupt.h"
#include "convgate/core/numbers.h"
#include "convgate/core/progress.h"
#include "convgate/core/units.h"

namespace convgate::convert {
namespace {

using Clock = std::chrono::steady_clock;

// A generous bound on --retries: beyond it a caller has a loop, not a flaky converter.
constexpr int kMaxAttempts = 100;
// Lines of the converter's output quoted in the error message (the record keeps more).
constexpr size_t kMessageLogLines = 3;
// Free space a conversion needs in the cache beyond the source's size (the output is about as
// large as the source: opset upgrades and ORT's optimizer keep the weights, fp16 halves them):
// record.json, the converter's own small files, the file system's metadata.
constexpr int64_t kCacheHeadroomBytes = 1 << 20;

Result<Converter> ResolveConverter(const ConversionRequest& request) {
  // The kind and its parameter names come from one table (kinds.cc); each converter checks the
  // parameters' values.
  CONVGATE_RETURN_IF_ERROR(CheckConversionRequest(request));
  const std::string& kind = request.kind;
  if (kind.rfind("opset:", 0) == 0) return MakeOpsetConverter(kind.substr(6), request.params);
  if (kind == "fp16") return MakeFp16Converter(request.params, onnx::TensorProto::FLOAT16);
  if (kind == "bf16") return MakeFp16Converter(request.params, onnx::TensorProto::BFLOAT16);
  if (kind.rfind("ort-optimized:", 0) == 0) {
    return MakeOrtOptimizedConverter(kind.substr(14), request.params);
  }
  if (kind == "onnx") return MakeTorchExportConverter(request);
  if (kind == "int8-dynamic" || kind == "int8-static") return MakeQuantizeConverter(request);
  if (kind == "openvino" || kind.rfind("openvino:", 0) == 0 || kind == "optimum-openvino" ||
      kind == "optimum-onnx") {
    return MakeOpenvinoConverter(request);
  }
  return MakeExternalConverter(request);
}

ConversionError ErrorForStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      return ConversionError::kBadRequest;
    case StatusCode::kNotFound:
      return ConversionError::kConverterMissing;
    default:
      return ConversionError::kFailed;
  }
}

Status CheckRequest(const ConversionRequest& request) {
  if (!(request.timeout_seconds > 0)) {
    return Status::InvalidArgument("the timeout must be positive, not " +
                                   FormatSeconds(request.timeout_seconds));
  }
  if (request.max_attempts < 1 || request.max_attempts > kMaxAttempts) {
    return Status::InvalidArgument("attempts must be between 1 and " +
                                   std::to_string(kMaxAttempts) + ", not " +
                                   std::to_string(request.max_attempts));
  }
  if (!(request.backoff_seconds >= 0)) {
    return Status::InvalidArgument("the retry backoff cannot be negative");
  }
  return ConverterStallSeconds().status();
}

std::string ProblemText(const AttemptResult& attempt, int attempts) {
  std::string text = attempt.problem;
  if (attempts > 1) text += " (attempt " + std::to_string(attempts) + ")";
  const std::string tail = TailLines(attempt.log_tail, kMessageLogLines);
  if (!tail.empty()) text += "; its output ends: " + tail;
  return text;
}

// The bytes of a source file, or of every file in a source folder; 0 when unknown (a torchvision
// name), which only makes the cache's free-space check less cautious.
int64_t SourceBytes(const std::filesystem::path& source) {
  std::error_code error;
  if (std::filesystem::is_regular_file(source, error)) {
    return static_cast<int64_t>(std::filesystem::file_size(source, error));
  }
  int64_t total = 0;
  auto it = std::filesystem::recursive_directory_iterator(source, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    std::error_code file_error;
    if (it->is_regular_file(file_error)) total += static_cast<int64_t>(it->file_size(file_error));
  }
  return total;
}

// Removes a cache work directory whose output the caller reads in place (it could not be
// published) once the caller lets go of the record.
struct WorkDirHold {
  std::filesystem::path dir;
  ~WorkDirHold() { RemoveWorkDir(dir); }
};

// One Convert call: its request, its record so far, and the steps in order.
class ConversionRun {
 public:
  explicit ConversionRun(const ConversionRequest& request)
      : request_(request), start_(Clock::now()) {
    record_.kind = request.kind;
    record_.params = request.params;
    record_.source_path = request.source.string();
  }

  Result<ConversionRecord> Run(ConversionRecord* on_error);

 private:
  Status Execute();
  Status Fail(ConversionError error, const std::string& problem);
  Status Resolve();
  Status ChooseExtension();
  Status OpenCache();
  Result<bool> TryCache();
  void Uncache(const std::string& why);
  std::string CacheRoomProblem();
  void CheckCacheRoom();
  bool LeaveAFullCache(const AttemptResult& attempt);
  Result<std::filesystem::path> NewWorkDir();
  void DropWorkDir(const std::filesystem::path& dir);
  void HoldWorkDir(const std::filesystem::path& dir);
  Result<std::filesystem::path> Publish(const std::filesystem::path& work_dir,
                                        const std::filesystem::path& out);
  Result<std::filesystem::path> Produce();
  Status Finish(const std::filesystem::path& work_dir);
  Status Deliver(const std::filesystem::path& model_path);
  Status NameOutput(const std::filesystem::path& delivered);
  void AutoPrune();

  const ConversionRequest& request_;
  Clock::time_point start_;
  ConversionRecord record_;
  std::optional<Converter> converter_;
  std::optional<ConversionCache> cache_;
  std::string extension_;
  std::vector<std::string> converter_notes_;  // what the converter said: cached with the result
  std::optional<TempDir> temp_work_;          // the work directory when it is not in the cache
  // The cache entry in use (a hit, or what this run published): locked until the run ends, and
  // for as long as the record's output_hold lives when the caller reads it from the cache.
  std::shared_ptr<EntryLock> entry_lock_;
};

Status ConversionRun::Fail(ConversionError error, const std::string& problem) {
  record_.error = error;
  std::string message = "cannot convert " + record_.source_path + " (--to " + request_.kind + ")";
  if (converter_) message += " with " + converter_->display;
  record_.error_message = message + ": " + problem;
  const StatusCode code = error == ConversionError::kBadRequest       ? StatusCode::kInvalidArgument
                          : error == ConversionError::kSourceNotFound ? StatusCode::kNotFound
                                                                      : StatusCode::kUnavailable;
  return Status(code, record_.error_message);
}

Status ConversionRun::Resolve() {
  if (Status valid = CheckRequest(request_); !valid.ok()) {
    return Fail(ConversionError::kBadRequest, valid.message());
  }
  Result<Converter> converter = ResolveConverter(request_);
  if (!converter.ok())
    return Fail(ErrorForStatus(converter.status()), converter.status().message());
  converter_ = std::move(converter).value();
  record_.tool = converter_->tool;
  record_.tool_version = converter_->tool_version;
  record_.converter = converter_->display;
  CONVGATE_RETURN_IF_ERROR(ChooseExtension());
  KeyMaterial key;
  key.kind = request_.kind;
  key.tool = converter_->tool;
  key.tool_version = converter_->tool_version;
  key.converter_identity = converter_->identity;
  key.params = request_.params;
  key.output_extension = extension_;
  if (converter_->source_is_file) {
    Result<std::string> digest = DigestSource(request_.source);
    if (!digest.ok()) {
      const bool missing = digest.status().code() == StatusCode::kNotFound;
      return Fail(missing ? ConversionError::kSourceNotFound : ConversionError::kIoError,
                  missing ? "the source does not exist" : digest.status().message());
    }
    key.source_digest = *digest;
  } else {
    record_.source_path = "torchvision:" + request_.params.at("arch");
    key.source_digest = Sha256Hex(record_.source_path);
  }
  record_.source_sha256 = key.source_digest;
  record_.cache_key = CacheKey(key);
  return Status::OK();
}

// The output's name in the work directory is "model" + extension_: the -o path's extension for a
// single file (.onnx without -o), .xml for an OpenVINO IR, none for a folder.
Status ConversionRun::ChooseExtension() {
  const std::string asked = request_.output.extension().string();
  switch (converter_->layout) {
    case OutputLayout::kFile:
      // A file named without an extension is written, then nothing can tell its format to load
      // it (verify's own run stopped there, after the conversion): refused before converting.
      if (!request_.output.empty() && asked.empty()) {
        return Fail(ConversionError::kBadRequest,
                    "-o " + request_.output.string() +
                        " has no extension, so no backend could tell the converted model's "
                        "format: name it OUT.onnx (or with the extension of the converter's "
                        "format)");
      }
      extension_ = asked.empty() ? ".onnx" : asked;
      return Status::OK();
    case OutputLayout::kOpenvinoIr:
      extension_ = ".xml";
      if (request_.output.empty() || asked == ".xml") return Status::OK();
      return Fail(ConversionError::kBadRequest,
                  "an OpenVINO IR is written as OUT.xml with OUT.bin beside it: -o " +
                      request_.output.string() + " must end in .xml");
    case OutputLayout::kFolder:
      extension_.clear();
      return Status::OK();
  }
  return Status::OK();
}

Status ConversionRun::OpenCache() {
  if (!request_.use_cache) return Status::OK();
  std::filesystem::path root = request_.cache_dir;
  if (root.empty()) {
    Result<std::filesystem::path> dir = DefaultCacheDir();
    if (!dir.ok()) return Fail(ConversionError::kIoError, dir.status().message());
    root = *dir;
  }
  cache_.emplace(root);
  if (Status created = cache_->Create(); !created.ok()) {
    Uncache(created.message());
    return Status::OK();
  }
  // What conversions killed outright (SIGKILL, a crash) left behind goes before this one starts.
  cache_->RemoveStaleWorkDirs();
  return Status::OK();
}

// A cache that cannot be used never fails a conversion that can run without it: the conversion
// goes on in a temporary folder, and the record says why nothing was cached.
void ConversionRun::Uncache(const std::string& why) {
  record_.notes.push_back("not cached: " + why);
  cache_.reset();
}

// Why the cache's file system has too little room for this conversion, or "" when it has room
// (or cannot say how much it has).
std::string ConversionRun::CacheRoomProblem() {
  Result<int64_t> free_bytes = cache_->FreeBytes();
  if (!free_bytes.ok()) return "";
  const int64_t needed = SourceBytes(request_.source) + kCacheHeadroomBytes;
  if (*free_bytes >= needed) return "";
  return "the cache's file system has " + FormatBytes(*free_bytes) + " free, less than the " +
         FormatBytes(needed) + " a conversion of this source needs there (its size plus " +
         FormatBytes(kCacheHeadroomBytes) + ")";
}

// A full cache is known before converting: the conversion runs outside it from the start.
void ConversionRun::CheckCacheRoom() {
  if (!cache_) return;
  if (std::string problem = CacheRoomProblem(); !problem.empty()) Uncache(problem);
}

// True when a failed attempt in the cache ran out of room there (the cache's file system is
// short of space now that it failed): the conversion moves out of the cache, and that attempt
// does not count against --retries.
bool ConversionRun::LeaveAFullCache(const AttemptResult& attempt) {
  if (!cache_) return false;
  const std::string problem = CacheRoomProblem();
  if (problem.empty()) return false;
  Uncache(problem + "; converted outside it (the attempt there " + attempt.problem + ")");
  return true;
}

Result<bool> ConversionRun::TryCache() {
  if (!cache_) return false;
  Result<CacheLookup> lookup = cache_->Lookup(record_.cache_key);
  if (!lookup.ok()) {
    Uncache(lookup.status().message());
    return false;
  }
  if (lookup->state == LookupState::kCorrupt) {
    record_.notes.push_back("cache entry " + record_.cache_key.substr(0, 12) +
                            " failed verification (" + lookup->problem +
                            "): discarded and rebuilt");
    return false;
  }
  if (lookup->state == LookupState::kMiss) return false;
  record_.cache_hit = true;
  record_.tool_version = lookup->record.tool_version;
  record_.output_sha256 = lookup->record.model_sha256;
  record_.output_bytes = lookup->record.model_bytes;
  record_.notes.insert(record_.notes.end(), lookup->record.notes.begin(),
                       lookup->record.notes.end());
  record_.cache_path = lookup->model_path.string();
  entry_lock_ = lookup->lock;
  CONVGATE_RETURN_IF_ERROR(Deliver(lookup->model_path));
  return true;
}

Result<std::filesystem::path> ConversionRun::NewWorkDir() {
  if (cache_) {
    Result<std::filesystem::path> dir = cache_->NewWorkDir(record_.cache_key);
    if (dir.ok()) return dir;
    Uncache(dir.status().message());
  }
  Result<TempDir> dir = MakeTempWorkDir();
  if (!dir.ok()) return Fail(ConversionError::kIoError, dir.status().message());
  temp_work_ = std::move(dir).value();
  return temp_work_->path();
}

void ConversionRun::DropWorkDir(const std::filesystem::path& dir) {
  RemoveWorkDir(dir);
  temp_work_.reset();
}

// The output stays where it was made, for the caller to read (no -o, and not in the cache): the
// record's output_hold removes its folder when the caller lets go.
void ConversionRun::HoldWorkDir(const std::filesystem::path& dir) {
  if (temp_work_) {
    record_.output_hold = std::make_shared<TempDir>(std::move(*temp_work_));
    temp_work_.reset();
    return;
  }
  record_.output_hold = std::make_shared<WorkDirHold>(WorkDirHold{dir});
}

Result<std::filesystem::path> ConversionRun::Produce() {
  CheckCacheRoom();
  // An export can run silent for a minute (optimum imports torch, traces, writes): the progress
  // line shows time passing, and which attempt this is.
  ProgressTask progress("converting " + request_.source.filename().string() + " (" + request_.kind +
                        ")");
  for (int attempt_idx = 1;; ++attempt_idx) {
    if (attempt_idx > 1) progress.Advance(0, "attempt " + std::to_string(attempt_idx));
    CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path work_dir, NewWorkDir());
    const std::filesystem::path out = work_dir / ("model" + extension_);
    AttemptResult attempt = converter_->attempt(request_.source, out, request_.timeout_seconds);
    if (attempt.ok()) attempt = CheckOutput(out, converter_->layout, std::move(attempt));
    record_.attempts = attempt_idx;
    if (attempt.ok()) {
      record_.notes.insert(record_.notes.end(), attempt.notes.begin(), attempt.notes.end());
      converter_notes_ = std::move(attempt.notes);
      if (!attempt.tool_version.empty()) record_.tool_version = attempt.tool_version;
      return work_dir;
    }
    // Measured before the work directory goes: what the converter wrote is what filled the cache.
    const bool moved_out = !Interrupted() && LeaveAFullCache(attempt);
    DropWorkDir(work_dir);
    if (moved_out) {
      --attempt_idx;  // the same attempt again, outside the cache
      continue;
    }
    record_.log_tail = attempt.log_tail;
    // An interrupt is the user's decision, not a flaky converter: never retried.
    if (!attempt.transient || attempt_idx >= request_.max_attempts || Interrupted()) {
      return Fail(attempt.error, ProblemText(attempt, attempt_idx));
    }
    const double delay = BackoffSeconds(request_.backoff_seconds, attempt_idx);
    record_.notes.push_back("attempt " + std::to_string(attempt_idx) + " of " +
                            std::to_string(request_.max_attempts) + " failed (" + attempt.problem +
                            "); retried after " + FormatSeconds(delay));
    if (!SleepUnlessInterrupted(delay)) {
      return Fail(attempt.error, ProblemText(attempt, attempt_idx) +
                                     "; not retried: " + InterruptedStatus().message());
    }
  }
}

// Publishes the work directory as the cache entry, locked from the moment it appears: the lock
// taken on the work directory moves with it, so no prune can take the entry from the caller.
Result<std::filesystem::path> ConversionRun::Publish(const std::filesystem::path& work_dir,
                                                     const std::filesystem::path& out) {
  CONVGATE_ASSIGN_OR_RETURN(std::shared_ptr<EntryLock> work_lock, cache_->LockShared(work_dir));
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path model,
                            cache_->Publish(work_dir, ToCached(record_, out, converter_notes_)));
  // Locked again by its name: the same entry when this run published it, or the one another
  // process published first (then ours was discarded).
  CONVGATE_ASSIGN_OR_RETURN(entry_lock_, cache_->LockShared(model.parent_path()));
  return model;
}

Status ConversionRun::Finish(const std::filesystem::path& work_dir) {
  const std::filesystem::path out = work_dir / ("model" + extension_);
  Result<std::string> sha = DigestOutput(out);
  if (!sha.ok()) return Fail(ConversionError::kIoError, sha.status().message());
  record_.output_sha256 = *sha;
  record_.output_bytes = OutputBytes(out);
  std::filesystem::path model_path = out;
  if (cache_) {
    Result<std::filesystem::path> published = Publish(work_dir, out);
    if (published.ok()) {
      model_path = *published;
      record_.cache_path = model_path.string();
    } else {
      record_.notes.push_back("not cached: " + published.status().message());
    }
  }
  Status delivered = Deliver(model_path);
  if (model_path == out) {
    // Not in the cache: without -o the caller reads the output where it was made.
    if (delivered.ok() && request_.output.empty()) {
      HoldWorkDir(work_dir);
    } else {
      DropWorkDir(work_dir);
    }
  }
  CONVGATE_RETURN_IF_ERROR(delivered);
  AutoPrune();
  return Status::OK();
}

// A folder output is named by its main model file when its converter picks one (what a backend
// loads), and a note names the folder, which the whole export needs; otherwise by the folder.
Status ConversionRun::NameOutput(const std::filesystem::path& delivered) {
  record_.output_path = delivered.string();
  if (converter_->layout != OutputLayout::kFolder || !converter_->main_file) return Status::OK();
  Result<std::string> main_file = converter_->main_file(delivered);
  if (!main_file.ok()) return Fail(ConversionError::kNoOutput, main_file.status().message());
  record_.output_path = (delivered / *main_file).string();
  record_.notes.push_back("the export is the folder " + delivered.string() +
                          "; its main model is " + *main_file);
  return Status::OK();
}

Status ConversionRun::Deliver(const std::filesystem::path& model_path) {
  if (request_.output.empty()) {
    if (entry_lock_) record_.output_hold = entry_lock_;
    return NameOutput(model_path);
  }
  if (Status copied = CopyModelAtomic(model_path, request_.output); !copied.ok()) {
    return Fail(ConversionError::kIoError, copied.message());
  }
  CONVGATE_RETURN_IF_ERROR(NameOutput(request_.output));
  std::error_code error;
  if (!std::filesystem::exists(ExternalDataPath(model_path), error)) return Status::OK();
  // The copy names its own data file, so its bytes differ from the cached model's.
  Result<std::string> sha = Sha256File(request_.output);
  if (!sha.ok()) return Fail(ConversionError::kIoError, sha.status().message());
  record_.output_sha256 = *sha;
  record_.output_bytes = static_cast<int64_t>(std::filesystem::file_size(request_.output, error));
  record_.notes.push_back("its weights are in " + ExternalDataPath(request_.output).string() +
                          " (external data): keep that file beside it");
  return Status::OK();
}

// The reference pipeline cleans its cache as it goes; so does every conversion that adds to it.
void ConversionRun::AutoPrune() {
  if (!cache_) return;
  Result<PruneOptions> options = PruneOptionsFromEnv();
  if (!options.ok()) {
    record_.notes.push_back("cache not pruned: " + options.status().message());
    return;
  }
  Result<PruneResult> pruned = cache_->Prune(*options, record_.cache_key);
  if (pruned.ok() && !pruned->removed.empty()) {
    record_.notes.push_back("cache over " + std::to_string(options->max_bytes) +
                            " bytes: removed " + std::to_string(pruned->removed.size()) +
                            " least recently used entr" +
                            (pruned->removed.size() == 1 ? "y" : "ies"));
  }
}

Status ConversionRun::Execute() {
  CONVGATE_RETURN_IF_ERROR(Resolve());
  CONVGATE_RETURN_IF_ERROR(OpenCache());
  CONVGATE_ASSIGN_OR_RETURN(bool hit, TryCache());
  if (hit) return Status::OK();
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path work_dir, Produce());
  return Finish(work_dir);
}

Result<ConversionRecord> ConversionRun::Run(ConversionRecord* on_error) {
  Status status = Execute();
  record_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  if (!status.ok()) {
    if (on_error != nullptr) *on_error = record_;
    return status;
  }
  return record_;
}

}  // namespace

std::string_view ConversionErrorName(ConversionError error) {
  switch (error) {
    case ConversionError::kNone:
      return "none";
    case ConversionError::kBadRequest:
      return "bad request";
    case ConversionError::kSourceNotFound:
      return "source not found";
    case ConversionError::kConverterMissing:
      return "converter missing";
    case ConversionError::kFailed:
      return "conversion failed";
    case ConversionError::kTimedOut:
      return "timed out";
    case ConversionError::kNoOutput:
      return "no output";
    case ConversionError::kInvalidOutput:
      return "invalid output";
    case ConversionError::kCacheCorrupt:
      return "cache corrupt";
    case ConversionError::kIoError:
      return "i/o error";
  }
  return "unknown";
}

ExitCode ExitCodeFor(ConversionError error) {
  if (error == ConversionError::kNone) return ExitCode::kPassed;
  return error == ConversionError::kBadRequest ? ExitCode::kUsage : ExitCode::kCannotRun;
}

Result<ConversionRecord> Convert(const ConversionRequest& request, ConversionRecord* on_error) {
  return ConversionRun(request).Run(on_error);
}

}  // namespace convgate::convert
