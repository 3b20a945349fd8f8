// An optional capability of a backend: models whose runtime copy (sessions with their weights and
// buffers) can be built later than the load, and let go and built again from the file. compare
// uses it to hold one side's session at a time: the source runs, lets go, then the target's is
// built. Kept beside backend.h rather than in it so that Backend and Model, which backend
// plugins implement, keep their layout; callers find the capability with dynamic_cast.
#pragma once

#include <filesystem>
#include <memory>

#include "convgate/backends/backend.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// Implemented by a Model beside Model (the "ort" backend's).
class ReleasableModel {
 public:
  virtual ~ReleasableModel() = default;

  // Builds what DeferringBackend::LoadDeferred left for later and returns the errors Backend::Load
  // would have returned for it, naming the model path. OK at once when nothing is pending.
  virtual Status Prepare() = 0;

  // Frees the runtime's copy of the model until Prepare or the next Run builds it again from the
  // file. Not concurrent with Run.
  virtual void Release() = 0;
};

// Implemented by a Backend beside Backend (the "ort" backend).
class DeferringBackend {
 public:
  virtual ~DeferringBackend() = default;

  // Backend::Load, except that the runtime's session is built only at ReleasableModel::Prepare or
  // the first Run: the file is read and checked (its signature is known) but not yet loaded into
  // the runtime. The model is a ReleasableModel.
  virtual Result<std::unique_ptr<Model>> LoadDeferred(const std::filesystem::path& model_path,
                                                      const LoadOptions& options) = 0;
};

// The model's ReleasableModel side, or null when its backend keeps what it loaded.
inline ReleasableModel* AsReleasable(Model& model) {
  return dynamic_cast<ReleasableModel*>(&model);
}

}  // namespace convgate::backends
