// The exec protocol's serving mode (exec_protocol.h): one process of the user's command serves
// every sample of a model, so a Python runner imports its runtime and loads the model once rather
// than once per sample (~0.4 s a sample for numpy alone).
//
// The process starts on the first Run and ends with the Model (its stdin closes). Each Run waits
// LoadOptions::timeout_seconds (--exec-timeout) for the answer, the first one covering the
// command's start-up. A command that ends, times out or answers out of turn is stopped; the next
// Run starts another. Lines on its stdout that are neither "ok NAME" nor "error MESSAGE" are
// ignored (a library's chatter), up to a bound.
//
// Thread safety: Run calls are serialized (one process, one sample at a time).
#pragma once

#include <filesystem>
#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

// REQUIRES: ServesEverySample(options.exec_argv) and CheckTemplate passed.
std::unique_ptr<Model> CreateServingExecModel(std::filesystem::path model_path, Signature signature,
                                              const LoadOptions& options);

}  // namespace convgate::backends
