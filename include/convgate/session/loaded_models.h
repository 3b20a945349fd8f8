// Models loaded once per workflow: verify runs its target end to end and then compares it, and
// without this the second stage read and compiled the same file again (an OpenVINO IR of
// resnet18: 0.2 s of a 1.5 s verify). A LoadedModels wraps a BackendFactory; the backends it
// creates hand out the Model they loaded before for the same path and load options, behind a
// proxy, instead of loading again.
//
// Backends that defer their runtime's session (backends::DeferringBackend, the "ort" backend) are
// passed through unwrapped: compare holds one such session at a time to bound its peak memory,
// which a kept model would defeat.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "convgate/backends/registry.h"

namespace convgate::session {

class LoadedModels : public backends::BackendFactory {
 public:
  explicit LoadedModels(backends::BackendFactory* inner) : inner_(inner) {}

  Result<std::unique_ptr<backends::Backend>> Create(std::string_view name) override;

  // The Model loaded before for `key`, or null; Keep remembers one. Thread-safe.
  std::shared_ptr<backends::Model> Find(const std::string& key);
  void Keep(const std::string& key, std::shared_ptr<backends::Model> model);

 private:
  backends::BackendFactory* inner_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<backends::Model>> models_;
};

}  // namespace convgate::session
