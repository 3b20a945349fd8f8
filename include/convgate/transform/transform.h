// Graph transformations of ONNX models (`convgate transform`), after Hugging Face Optimum's
// transformation framework: each pass has a deterministic signature made from its name and
// parameters, marks every node it creates or changes with it, and declares whether it preserves
// the computation exactly. What each pass changed is returned as a side list, so a caller can
// inspect exactly which nodes a pass touched before trusting its output (and `--validate` then
// compares the outputs of both models).
//
// Marks live in NodeProto.doc_string (ONNX 1.12's NodeProto has no metadata_props), one line per
// pass: "convgate.transform: <signature> <pass>". Protobuf types never appear in this header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::transform {

struct PassSpec {
  std::string name;
  std::map<std::string, std::string> params;
};

// Parses --pass values: "a", "a,b", "name:key=value" and "name:k1=v1:k2=v2", in order. Unknown
// pass names and parameters are InvalidArgument naming them and what is allowed.
Result<std::vector<PassSpec>> ParsePassSpecs(const std::vector<std::string>& texts);

// The passes users may ask for, in the order `--help` lists them (hidden test passes excluded).
std::vector<std::string> PassNames();

// The first 16 hex digits of sha256("name|k1=v1|k2=v2") (parameters sorted by key): the same
// pass with the same parameters always has the same signature, another pass or another parameter
// value never (up to hash collisions).
std::string PassSignature(const PassSpec& spec);

// One node a pass touched. `kind` is "created", "changed" or "removed" (removed nodes are not in
// the output model, so this list is the only record of them).
struct NodeChange {
  std::string kind;
  std::string node;  // the node's name, or its first output when it has none
  std::string op;
  std::string change;  // what happened, in a sentence fragment
};

// Candidates a pass looked at and left alone for one reason.
struct SkippedNodes {
  std::string kind;                // the kind of candidate: "BatchNormalization", "Div", ...
  std::string reason;              // "its Conv weight is not a constant"
  std::vector<std::string> nodes;  // every node skipped for this reason, in graph order
  std::string first_detail;        // what the first of them showed: "'w0' is computed by Relu 'r'"
};

struct PassRecord {
  PassSpec spec;
  std::string signature;
  bool preserves_computation = false;
  std::string action;  // what the pass does to a candidate: "folded", "fused", "removed", ...
  std::vector<NodeChange> changes;
  // How many candidates of each kind the pass considered ("BatchNormalization" -> 35); every kind
  // it looks for is listed, with 0 when the graph has none.
  std::map<std::string, int64_t> candidates;
  std::vector<SkippedNodes> skipped;  // one entry per (kind, reason), in order of first occurrence
};

struct TransformRecord {
  std::filesystem::path source;
  std::filesystem::path output;
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  std::vector<PassRecord> passes;
};

// Loads `source`, applies the passes in order and writes `output`. Errors name the file: NotFound
// / DataLoss for a missing or unparseable source, Unimplemented for weights stored as external
// data, FailedPrecondition when a pass leaves a model ONNX's checker rejects (naming the pass),
// Unavailable when ONNX Runtime fails to evaluate a node for constant_folding.
Result<TransformRecord> TransformModelFile(const std::filesystem::path& source,
                                           const std::filesystem::path& output,
                                           const std::vector<PassSpec>& passes);

// Optimum's get_transformed_nodes: the names (first output when unnamed) of the main-graph nodes
// of the model at `path` marked with `signature`, in graph order.
Result<std::vector<std::string>> TransformedNodes(const std::filesystem::path& path,
                                                  const std::string& signature);

// {"source", "output", "nodes_before", "nodes_after", "passes": [{"name", "params", "signature",
// "preserves_computation", "counts": {"created", "changed", "removed"}, "changed_nodes": [...],
// "candidates": {kind: count}, "skipped": [{"kind", "reason", "count", "nodes", "first_detail"}],
// "notes": [the lines SkipNotes gives]}]}.
nlohmann::json TransformJson(const TransformRecord& record);

// Why a pass left candidates alone, one line per (kind, reason): "fold_batchnorm: 35 of 35
// BatchNormalization nodes not folded: its Conv weight is not a constant (first 'bn0': 'w0' is
// computed by Relu 'r')"; or, when the graph has no candidate at all, "div_to_mul: no Div node in
// the main graph". Empty when the pass rewrote every candidate.
std::vector<std::string> SkipNotes(const PassRecord& pass);

// One line per pass (name, signature, exact or approximate, counts) followed by its SkipNotes;
// with `list_nodes`, one indented line per node touched and the nodes skipped for each reason.
std::string TransformText(const TransformRecord& record, bool list_nodes);

}  // namespace convgate::transform
