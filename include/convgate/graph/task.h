// The task a model performs, read from what it declares (verify_result.json's "task"). Only
// conclusive patterns name a task; anything else is null in the report, never a guess.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// The optimum export task of a Hugging Face model folder (its config.json), by the
// verify-conversion gate's rule: the config's pipeline_tag through the gate's PIPELINE_TAG_MAP;
// else model_type t5, mt5, bart, mbart -> text2text-generation-with-past; else, where the gate
// would say text-generation-with-past of any model, the task its architecture class implies
// (*ForCausalLM / *LMHeadModel: text-generation-with-past, *ForMaskedLM: fill-mask,
// *ForImageClassification: image-classification, Whisper / *ForCTC:
// automatic-speech-recognition, CLIPModel: zero-shot-image-classification, a bare *Model:
// feature-extraction, ...); else text-generation-with-past. nullopt when there is no readable
// config.json object.
// A `declared_type` (--model-type, a manifest's model_type) comes first, as TaskOfModelType
// says; a type it does not know leaves the rule above deciding, and the evidence says so.
std::optional<DetectedTask> ResolveHfTask(const std::filesystem::path& folder,
                                          std::string_view declared_type = {});

// The task a transformers architecture class implies ("BertForMaskedLM": fill-mask), or "".
std::string TaskOfArchitecture(const std::string& arch);

// The task a declared model type steers an export to: the type's family (bert and the encoders
// like it, t5 and the encoder-decoders, gpt and the decoders, vit and the image classifiers,
// clip, whisper, wav2vec2 and the speech encoders) takes the first of `architectures` whose task
// is one of the family's (BertForSequenceClassification: text-classification), else the family's
// own (bert: feature-extraction, t5: text2text-generation-with-past, gpt:
// text-generation-with-past, vit: image-classification, clip: zero-shot-image-classification,
// whisper: automatic-speech-recognition-with-past, wav2vec2: automatic-speech-recognition).
// nullopt for a type of no family. Types compare without case.
std::optional<DetectedTask> TaskOfModelType(std::string_view model_type,
                                            const std::vector<std::string>& architectures);

}  // namespace convgate::graph
