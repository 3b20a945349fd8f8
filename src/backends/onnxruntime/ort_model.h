// A model loaded into ONNX Runtime.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/onnxruntime/ort_session.h"
#include "convgate/backends/backend.h"
#include "convgate/backends/releasable.h"

namespace convgate::backends {

// signature() is the ONNX graph's declaration (graph::SummarizeOnnxModel), not ORT's view: ORT
// fills in shapes it inferred where the model declares none, but `run` checks outputs against what
// the model declares. Load verifies that both agree on names and element types.
//
// Run may be called from several threads at once (ORT sessions are thread-safe; the cache of
// sessions that expose intermediate values is guarded by a mutex).
class OrtModel : public Model, public ReleasableModel {
 public:
  // With `defer_session` the session is built at Prepare or the first Run (ReleasableModel).
  static Result<std::unique_ptr<OrtModel>> Load(const std::filesystem::path& model_path,
                                                const LoadOptions& options,
                                                bool defer_session = false);

  const Signature& signature() const override { return signature_; }
  Result<TensorMap> Run(const TensorMap& inputs,
                        const std::vector<std::string>& output_names) override;
  // What a reader needs to rule the runtime's own choices in or out: the execution provider,
  // the optimizer's level and the thread counts.
  std::string settings() const override {
    const int intra = options_.intra_op_threads, inter = options_.inter_op_threads;
    return std::string("CPUExecutionProvider, graph optimization ") +
           GraphOptimizationName(options_.graph_optimization) + ", intra-op threads " +
           (intra > 0 ? std::to_string(intra) : std::string("auto")) + ", inter-op " +
           (inter > 1 ? std::to_string(inter) + " threads (parallel)" : std::string("sequential")) +
           (emulate_bfloat16_ ? ", bfloat16 emulated (float32 compute, every bfloat16 value "
                                "rounded as stored: the CPU provider has no bfloat16 kernels)"
                              : "");
  }
  bool concurrent_runs() const override { return true; }
  Status Prepare() override;
  void Release() override;

 private:
  // What identifies the file the model was loaded from, to notice it changing before it is
  // re-read for an intermediate-value session.
  struct FileStamp {
    uintmax_t size = 0;
    std::filesystem::file_time_type mtime;
    bool operator==(const FileStamp&) const = default;
  };
  struct CachedSession {
    std::vector<std::string> extra_outputs;  // sorted
    std::shared_ptr<Ort::Session> session;
  };

  OrtModel() = default;
  static Result<FileStamp> StampOf(const std::filesystem::path& path);
  OrtSessionConfig SessionConfig() const {
    return {path_, options_.intra_op_threads, options_.inter_op_threads, has_external_data_,
            options_.graph_optimization};
  }

  Status CheckOutputNames(const std::vector<std::string>& names) const;
  Result<std::shared_ptr<Ort::Session>> SessionFor(const std::vector<std::string>& names);
  // The session for the declared outputs, built at first use when Load deferred it, rebuilt if an
  // intermediate session or Release displaced it. The first one built is checked against the
  // graph (CheckSessionMatchesGraph). REQUIRES: cache_mutex_ held.
  Result<std::shared_ptr<Ort::Session>> PlainSession();
  Result<std::shared_ptr<Ort::Session>> CreateIntermediateSession(
      const std::vector<std::string>& extra_outputs);
  // The session for the declared outputs: CreateReferencingSession, else ORT loading the file
  // (with ORT's own messages when it cannot).
  Result<std::shared_ptr<Ort::Session>> CreateSessionFromFile() const;
  // A session whose weights ORT reads from the model file itself: the model's structure, with
  // `extra_outputs` added (graph::WithOutputsReferencingWeights), is loaded from memory, and each
  // initializer is external data at its place in the file. ORT then parses no serialized copy of
  // the weights before making its own tensors, and nothing is copied or written (resnet18's
  // marked session: 35 ms instead of 105). An error when that cannot be done (a model with
  // external data of its own, a file ORT will not read through that path); callers then load
  // the file itself.
  Result<std::shared_ptr<Ort::Session>> CreateReferencingSession(
      const std::vector<std::string>& extra_outputs) const;
  // A session of the model rewritten to emulate bfloat16 (graph/internal/bfloat16_emulation.h),
  // with `extra_outputs` added.
  Result<std::shared_ptr<Ort::Session>> CreateEmulatedSession(
      const std::vector<std::string>& extra_outputs) const;
  // FailedPrecondition, ending in `what_to_do`, when the file's stamp is not the one taken at
  // load (the file was replaced or modified since).
  Status CheckUnchanged(std::string_view what_to_do) const;
  // Runs under options_.limits.run_timeout_seconds (OrtRunTimeout).
  Result<TensorMap> RunSession(Ort::Session& session, const TensorMap& inputs,
                               const std::vector<std::string>& names) const;
  // Unavailable naming the model and the limit.
  Status TimedOut(double seconds) const;

  std::filesystem::path path_;
  LoadOptions options_;
  Ort::Env* env_ = nullptr;  // process-wide, never destroyed
  Signature signature_;
  bool has_external_data_ = false;
  bool emulate_bfloat16_ = false;  // some value is bfloat16 (ModelSummary::uses_bfloat16)
  FileStamp stamp_;

  std::mutex cache_mutex_;                 // guards session_ and cache_
  std::shared_ptr<Ort::Session> session_;  // null until built, or once displaced or released
  bool session_checked_ = false;           // a session was checked against the graph
  std::list<CachedSession> cache_;         // most recently used first
};

}  // namespace convgate::backends
