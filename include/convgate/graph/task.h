// The task a model performs, read from what it declares (verify_result.json's "task"). Only
// conclusive patterns name a task; anything else is null in the report, never a guess.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "convgate/core/signature.h"

namespace convgate::graph {

struct DetectedTask {
  std::string task;      // Hugging Face pipeline-tag spelling: "image-classification", ...
  std::string evidence;  // why, in one sentence, for e2e_detail and report.json
};

// Patterns, in order:
//   image-classification  one floating rank-4 input with 1 or 3 channels (NCHW or NHWC), a Conv
//                         in the graph, and a floating [batch, classes] output (classes >= 2)
//   text-classification   an integer [batch, seq] input named like *ids* and a floating
//                         [batch, classes] output
//   feature-extraction    the same input and a floating [batch, seq, hidden] output
//   tabular-classification one floating [batch, features] input and an integer label output
//                         (rank 1) beside it, as sklearn-onnx writes classifiers
// `op_histogram` is graph::ModelSummary::op_histogram (empty when unknown).
std::optional<DetectedTask> DetectTask(const Signature& signature,
                                       const std::map<std::string, int64_t>& op_histogram);

}  // namespace convgate::graph
