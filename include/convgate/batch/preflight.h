// The checks a batch makes on an entry's files before any job runs (the model file verification
// pipeline's pre-benchmark verification), and where the model type comes from.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/batch/manifest.h"

namespace convgate::batch {

struct ModelType {
  std::string type;    // "bert", "image-classification", ...; "" when nothing decided
  std::string source;  // "manifest", "config.json", "graph", "name", "none"
};

struct Preflight {
  std::string model_sha256;  // the source's (a folder: "")
  // sha256 over every file the entry reads (source, target, policy, inputs), for the resume key.
  std::string files_sha256;
  ModelType model_type;
  // "" when every file exists, is readable and parses as its format; else "missing-file" or
  // "corrupt-file", and the text names the file and what is wrong.
  std::string error_category;
  std::string error_text;
};

// Checks every file of `entry`: exists, readable, parses as its format (io::SniffFile; ONNX
// parsed whole by graph::SummarizeOnnxModel), sha256 recorded; then decides the model type.
// Never fails: a bad file is data in the result.
Preflight CheckEntry(const ManifestEntry& entry);

// The model file verification pipeline's name heuristic, on a lower-cased model id or path:
// bert, t5, gpt, vit (also "vision"), clip, whisper, wav2vec2. "" when none matches.
std::string ModelTypeFromName(std::string_view name);

}  // namespace convgate::batch
