// compare --feedback OUT=IN: a stateful single model as a one-node pipeline, so it runs on the
// pipeline engine (one loop implementation, one validation).
#include "convgate/pipeline/pipeline.h"
#include "convgate/session/side.h"

namespace convgate::pipeline {
namespace {

constexpr char kNode[] = "model";

Result<InitialValue> ZerosFor(const TensorInfo& input, const std::map<std::string, int64_t>& dims) {
  if (!input.dtype.has_value() || !input.has_shape) {
    return Status::InvalidArgument("--feedback: input '" + input.name +
                                   "' declares no dtype and "
                                   "shape to start from zeros; write a pipeline spec with an "
                                   "initial value, or use --set " +
                                   std::string(kNode) + "." + input.name + "=FILE");
  }
  InitialValue initial;
  initial.zeros = true;
  initial.dtype = input.dtype;
  for (const Dim& dim : input.shape) {
    auto bound = dims.find(dim.symbol);
    // An unbound symbol is 1, as generated inputs default it (inputs/dataset.h).
    initial.shape.push_back(dim.is_fixed() ? dim.value : bound != dims.end() ? bound->second : 1);
  }
  return initial;
}

const FeedbackPair* FeedbackInto(const std::vector<FeedbackPair>& pairs, const std::string& input) {
  for (const FeedbackPair& pair : pairs) {
    if (pair.input == input) return &pair;
  }
  return nullptr;
}

Status CheckPairs(const std::vector<FeedbackPair>& pairs, const Signature& signature,
                  const std::string& model) {
  for (const FeedbackPair& pair : pairs) {
    if (signature.FindOutput(pair.output) == nullptr) {
      return Status::InvalidArgument("--feedback " + pair.output + "=" + pair.input + ": " + model +
                                     " has no output '" + pair.output + "'");
    }
    if (signature.FindInput(pair.input) == nullptr) {
      return Status::InvalidArgument("--feedback " + pair.output + "=" + pair.input + ": " + model +
                                     " has no input '" + pair.input + "'");
    }
  }
  return Status::OK();
}

}  // namespace

Result<FeedbackPair> ParseFeedbackPair(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument("--feedback '" + std::string(text) +
                                   "' is not OUTPUT=INPUT (e.g. --feedback h_out=h)");
  }
  return FeedbackPair{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

Result<Spec> FeedbackSpec(const std::string& source, const std::string& source_backend,
                          const std::string& target, const std::string& target_backend,
                          const std::vector<FeedbackPair>& feedback,
                          const std::map<std::string, int64_t>& dims,
                          backends::BackendFactory* factory, const gate::DataOptions& data) {
  CONVGATE_ASSIGN_OR_RETURN(session::ResolvedSide resolved,
                            session::ResolveSide(source, source_backend));
  gate::SideRecord record;
  CONVGATE_ASSIGN_OR_RETURN(
      session::LoadedModel loaded,
      session::LoadModel(resolved, *factory, session::SideLoadOptions(data, {}), record));
  const Signature& signature = loaded.model->signature();
  CONVGATE_RETURN_IF_ERROR(CheckPairs(feedback, signature, source));
  Spec spec;
  spec.path = "compare --feedback";
  spec.name = "compare --feedback";
  NodeSpec node;
  node.name = kNode;
  node.model = source;
  node.backend = source_backend;
  node.target = target;
  node.target_backend = target_backend;
  spec.nodes.push_back(std::move(node));
  for (const TensorInfo& input : signature.inputs) {
    EdgeSpec edge;
    edge.to = Endpoint{kNode, input.name};
    if (const FeedbackPair* pair = FeedbackInto(feedback, input.name)) {
      edge.from = Endpoint{kNode, pair->output};
      edge.feedback = true;
      CONVGATE_ASSIGN_OR_RETURN(edge.initial, ZerosFor(input, dims));
    } else {
      edge.from = Endpoint{"", input.name};
      spec.inputs.push_back(input.name);
    }
    spec.edges.push_back(std::move(edge));
  }
  for (const TensorInfo& output : signature.outputs) {
    spec.outputs.push_back(output.name);
    EdgeSpec edge;
    edge.from = Endpoint{kNode, output.name};
    edge.to = Endpoint{"", output.name};
    spec.edges.push_back(std::move(edge));
  }
  return spec;
}

}  // namespace convgate::pipeline
