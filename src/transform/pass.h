// The pass interface and the marking every pass does (internal to src/transform).
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/transform/transform.h"

namespace convgate::transform {

// What a running pass records: its marks in doc_string, the side list of NodeChanges, and the
// candidates it considered and why it left some alone.
class PassContext {
 public:
  // `record` outlives the context; the pass's changes, candidates and skips are added to it.
  PassContext(std::string pass_name, PassRecord* record)
      : pass_name_(std::move(pass_name)), record_(record) {}

  // Marks `node` with this pass's signature and records it as "created" or "changed".
  void Created(onnx::NodeProto& node, const std::string& change);
  void Changed(onnx::NodeProto& node, const std::string& change);
  // Records a node about to be removed (it cannot carry a mark).
  void Removed(const onnx::NodeProto& node, const std::string& change);

  // Declares a kind of candidate the pass looks for, so that a graph without any can say so.
  void Expect(const std::string& kind);
  // Counts one candidate of `kind` considered.
  void Candidate(const std::string& kind);
  // Records a candidate left alone: `reason` is shared by every node skipped the same way ("its
  // Conv weight is not a constant"), `detail` is specific to this one ("'w' is computed by ...").
  void Skipped(const std::string& kind, const onnx::NodeProto& node, const std::string& reason,
               const std::string& detail = "");

  const std::string& signature() const { return record_->signature; }

 private:
  void Mark(onnx::NodeProto& node) const;
  void Record(const char* kind, const onnx::NodeProto& node, const std::string& change);

  std::string pass_name_;
  PassRecord* record_;
};

// The doc_string line that marks a node as touched by a pass with `signature`.
std::string MarkLine(const std::string& signature, const std::string& pass_name);

// A node's label in the side list: its name, or its first output when it has none.
std::string NodeLabel(const onnx::NodeProto& node);

// Names an unnamed node after its first output. Passes call it before changing a node's outputs
// (and PassContext on every node it marks) so the side list and the marks in the output model
// name the node the same way.
void NameIfUnnamed(onnx::NodeProto& node);

class Pass {
 public:
  virtual ~Pass() = default;
  // Applies the pass to the main graph of `model` in place.
  virtual Status Apply(onnx::ModelProto& model, PassContext& context) = 0;
};

using Params = std::map<std::string, std::string>;

struct PassInfo {
  std::string name;
  bool preserves_computation = false;
  bool hidden = false;  // deliberately wrong variants for tests: not listed in --help
  std::string action;   // what it does to a candidate, for skip notes: "folded", "fused", ...
  std::vector<std::string> param_names;
  std::function<Result<std::unique_ptr<Pass>>(const Params&)> make;
};

// Every pass, in listing order (registry.cc).
const std::vector<PassInfo>& AllPasses();
const PassInfo* FindPass(const std::string& name);

// One factory per pass file.
Result<std::unique_ptr<Pass>> MakeFoldBatchNorm(const Params& params);
Result<std::unique_ptr<Pass>> MakeFoldBatchNormWrongForTests(const Params& params);
Result<std::unique_ptr<Pass>> MakeFuseMatMulAdd(const Params& params);
Result<std::unique_ptr<Pass>> MakeDivToMul(const Params& params);
Result<std::unique_ptr<Pass>> MakeConstantFolding(const Params& params);
Result<std::unique_ptr<Pass>> MakeEliminateIdentity(const Params& params);
Result<std::unique_ptr<Pass>> MakeMergeParallelMatMuls(const Params& params);

}  // namespace convgate::transform
