// Models by id, converted when the repository publishes no ONNX file: the reference pipeline's
// "PyTorch to ONNX conversion pipeline". An hf:// .onnx file the repository lacks, in a
// repository with PyTorch weights (model.safetensors or pytorch_model.bin) and config.json, is
// exported by optimum (the `optimum-onnx` conversion kind, through Convert: timeout, retries,
// cache, typed errors) from the files the export needs, fetched at one commit.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/convert/convert.h"
#include "convgate/hub/hub.h"

namespace convgate::convert {

// The files an export reads besides config.json and the weights, fetched when the repository has
// them: tokenizers, image processors, generation settings. optimum's export may load them to
// build its dummy inputs and saves them beside the model.
inline constexpr const char* kHubExportSideFiles[] = {"tokenizer.json",
                                                      "tokenizer_config.json",
                                                      "special_tokens_map.json",
                                                      "vocab.txt",
                                                      "vocab.json",
                                                      "merges.txt",
                                                      "spiece.model",
                                                      "sentencepiece.bpe.model",
                                                      "preprocessor_config.json",
                                                      "generation_config.json"};

struct HubModel {
  std::filesystem::path path;  // the model file to load
  hub::ModelOrigin origin;     // how == "converted" when it was exported
  // Keeps a converted model's file valid (ConversionRecord::output_hold) while it is used.
  std::shared_ptr<void> hold;
  ConversionRecord conversion;  // when converted: the record (cache_hit on a second run)
};

// The repository `uri_text` names (hf://org/name[@revision], no file) as a local Hugging Face model
// folder: config.json, the PyTorch weights and the side files above that it has, all at the commit
// config.json resolved to, linked from the hub cache into a temporary folder that `hold` keeps.
// The origin's `how` is "downloaded" or "cache" and its `file` empty. NotFound naming the
// repository and what it lacks; the hub's errors as hub::FetchFile's.
Result<HubModel> FetchHubFolder(const hub::HubOptions& options, std::string_view uri_text);

struct HubModelOptions {
  double timeout_seconds = 600.0;   // per export attempt (ConversionRequest's default)
  std::filesystem::path cache_dir;  // the conversion cache; empty: Convert's default
  // A declared model type (--model-type, a manifest's model_type): the export's model_type
  // parameter, steering its task (graph::TaskOfModelType). Empty: config.json decides.
  std::string model_type;
};

// The model `uri_text` (hf://org/name[@rev]/path) names: the file itself when the repository has
// it; else, for a path ending in .onnx at the repository's root (model.onnx, or any *.onnx name:
// the export writes model.onnx, see docs/openvino.md) and a repository with config.json and
// model.safetensors or pytorch_model.bin, the optimum-onnx export of those files and the side
// files above that it has, all at the commit config.json resolved to. Errors: hub::FetchFile's
// (NotFound naming repo, revision and file when there is nothing to convert from, saying what is
// missing); a failed export is the conversion's Status (Unavailable when the exporter ran and
// failed) naming the model type and carrying the exporter's message; then `*conversion_error`,
// when given, says how it failed (kNone for every other outcome).
Result<HubModel> FetchHubModel(const hub::HubOptions& options, std::string_view uri_text,
                               const HubModelOptions& model_options = {},
                               ConversionError* conversion_error = nullptr);

}  // namespace convgate::convert
