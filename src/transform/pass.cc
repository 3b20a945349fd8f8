#include "transform/pass.h"

namespace convgate::transform {

std::string MarkLine(const std::string& signature, const std::string& pass_name) {
  return "convgate.transform: " + signature + " " + pass_name;
}

std::string NodeLabel(const onnx::NodeProto& node) {
  if (!node.name().empty() || node.output_size() == 0) return node.name();
  return node.output(0);
}

void NameIfUnnamed(onnx::NodeProto& node) {
  if (node.name().empty() && node.output_size() > 0) node.set_name(node.output(0));
}

void PassContext::Mark(onnx::NodeProto& node) const {
  NameIfUnnamed(node);
  const std::string line = MarkLine(record_->signature, pass_name_);
  const std::string& doc = node.doc_string();
  // One line per pass: a node touched twice by the same pass keeps a single mark.
  if (doc.find(line) != std::string::npos) return;
  node.set_doc_string(doc.empty() ? line : doc + "\n" + line);
}

void PassContext::Record(const char* kind, const onnx::NodeProto& node, const std::string& change) {
  record_->changes.push_back(NodeChange{kind, NodeLabel(node), node.op_type(), change});
}

void PassContext::Created(onnx::NodeProto& node, const std::string& change) {
  Mark(node);
  Record("created", node, change);
}

void PassContext::Changed(onnx::NodeProto& node, const std::string& change) {
  Mark(node);
  Record("changed", node, change);
}

void PassContext::Removed(const onnx::NodeProto& node, const std::string& change) {
  Record("removed", node, change);
}

void PassContext::Expect(const std::string& kind) { record_->candidates.emplace(kind, 0); }

void PassContext::Candidate(const std::string& kind) { ++record_->candidates[kind]; }

void PassContext::Skipped(const std::string& kind, const onnx::NodeProto& node,
                          const std::string& reason, const std::string& detail) {
  for (SkippedNodes& skipped : record_->skipped) {
    if (skipped.kind == kind && skipped.reason == reason) {
      skipped.nodes.push_back(NodeLabel(node));
      return;
    }
  }
  record_->skipped.push_back(SkippedNodes{kind, reason, {NodeLabel(node)}, detail});
}

}  // namespace convgate::transform
