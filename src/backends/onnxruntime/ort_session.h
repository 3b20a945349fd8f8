// Creating ONNX Runtime sessions and checking what they report against the ONNX graph.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <memory>
#include <string>

#include "convgate/backends/backend.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"

namespace convgate::backends {

struct OrtSessionConfig {
  std::filesystem::path model_path;  // for messages and to find external data
  int intra_op_threads = 0;          // 0: ORT's default (one per physical core)
  int inter_op_threads = 0;          // > 1: parallel execution mode with that many threads
  bool has_external_data = false;
  GraphOptimization graph_optimization = GraphOptimization::kExtended;
  // Where external data is found; empty: model_path's folder.
  std::filesystem::path external_data_folder = {};
};

// Creates a session from serialized model bytes (the file's bytes, or a graph::WithOutputs copy).
// Loading from bytes rather than the path means ORT runs exactly the bytes convgate parsed and
// both kinds of session load the same way; models with external data get their directory as
// the external initializers folder, which ORT otherwise only knows when given a path.
// Errors (OrtLoadError) name the model and carry ORT's message.
Result<std::shared_ptr<Ort::Session>> CreateOrtSession(Ort::Env& env, const std::string& bytes,
                                                       const OrtSessionConfig& config);

// The same from config.model_path, which ORT reads itself (external data from its folder). A
// model's first session is made so: the caller's copy of the bytes is gone by then, and holding
// it while ORT builds its own would add a whole model to the peak (46 MB for resnet18). With
// `file`, ORT reads that file instead (a marked copy of the model); messages still name
// config.model_path.
Result<std::shared_ptr<Ort::Session>> CreateOrtSessionFromFile(
    Ort::Env& env, const OrtSessionConfig& config, const std::filesystem::path& file = {});

// Internal when the inputs or outputs ORT reports (names in order, element types) differ from
// the graph's declaration `declared`: convgate feeds and checks against the declaration, so a
// difference would mean the two disagree about what the model is.
Status CheckSessionMatchesGraph(const Ort::Session& session, const Signature& declared,
                                const std::filesystem::path& model_path);

}  // namespace convgate::backends
