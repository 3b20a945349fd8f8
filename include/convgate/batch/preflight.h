// The checks a batch makes on an entry's files before any job runs (the model file verification
// pipeline's pre-benchmark verification), and where the model type comes from.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "convgate/batch/manifest.h"
#include "convgate/hub/hub.h"

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
  // The entry's hf:// models (source, target), fetched into the hub cache: where each came from.
  // The job is given each one's PinnedUri() instead, so it reads the bytes checked here.
  std::vector<hub::ModelOrigin> origins;
  // "" when every file exists, is readable and parses as its format; else "missing-file" or
  // "corrupt-file" (an hf:// file: the hub has no such repository, revision or file / the
  // download failed its checks), "fetch-failed" (the hub could not be reached or refused) or
  // "usage" (a malformed HF_* setting), and the text names the file and what is wrong.
  std::string error_category;
  std::string error_text;
};

// Checks every file of `entry`: exists, readable, parses as its format (io::SniffFile; ONNX
// parsed whole by graph::SummarizeOnnxModel), sha256 recorded; then decides the model type.
// hf:// models are fetched first (hub::FetchFile with the settings of the environment: retries,
// HF_HUB_OFFLINE) and hashed under their URI, not their cache path, so the resume key of an
// entry is the same wherever the cache is. Never fails: a bad file is data in the result.
// `timeout_seconds` > 0 (the entry's timeout) bounds those fetches, retries included: a hub too
// slow to deliver within it is a "fetch-failed" entry, not a batch that waits.
Preflight CheckEntry(const ManifestEntry& entry, double timeout_seconds = 0);

// The entry's command line (ManifestEntry::Args) with each fetched hf:// model pinned to the
// commit the preflight resolved.
std::vector<std::string> JobArgs(const ManifestEntry& entry, const Preflight& preflight);

// The model file verification pipeline's name heuristic, on a lower-cased model id or path:
// bert, t5, gpt, vit (also "vision"), clip, whisper, wav2vec2. "" when none matches.
std::string ModelTypeFromName(std::string_view name);

}  // namespace convgate::batch
