#include "convgate/graph/task.h"

#include <algorithm>
#include <cctype>

namespace convgate::graph {
namespace {

bool Floating(const TensorInfo& info) { return info.dtype && IsFloating(*info.dtype); }
bool Integer(const TensorInfo& info) { return info.dtype && IsInteger(*info.dtype); }

int64_t FixedDim(const TensorInfo& info, size_t axis) {
  return info.has_shape && axis < info.shape.size() ? info.shape[axis].value : -1;
}

size_t Rank(const TensorInfo& info) { return info.has_shape ? info.shape.size() : 0; }

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// [batch, classes] with a fixed class count of at least 2.
const TensorInfo* ClassScores(const Signature& signature) {
  for (const TensorInfo& output : signature.outputs) {
    if (Floating(output) && Rank(output) == 2 && FixedDim(output, 1) >= 2) return &output;
  }
  return nullptr;
}

std::string Describe(const TensorInfo& info) {
  return "'" + info.name + "' " + info.type_name + FormatDims(info);
}

std::optional<DetectedTask> Image(const Signature& signature,
                                  const std::map<std::string, int64_t>& ops) {
  if (signature.inputs.size() != 1 || !ops.count("Conv")) return std::nullopt;
  const TensorInfo& input = signature.inputs.front();
  if (!Floating(input) || Rank(input) != 4) return std::nullopt;
  const int64_t nchw = FixedDim(input, 1), nhwc = FixedDim(input, 3);
  const bool channels = nchw == 1 || nchw == 3 || nhwc == 1 || nhwc == 3;
  const TensorInfo* scores = ClassScores(signature);
  if (!channels || scores == nullptr) return std::nullopt;
  return DetectedTask{"image-classification",
                      "input " + Describe(input) + " is an image batch, output " +
                          Describe(*scores) + " holds class scores, and the graph convolves"};
}

std::optional<DetectedTask> Text(const Signature& signature) {
  const TensorInfo* ids = nullptr;
  for (const TensorInfo& input : signature.inputs) {
    if (Integer(input) && Rank(input) == 2 && Lower(input.name).find("ids") != std::string::npos) {
      ids = &input;
    }
  }
  if (ids == nullptr || signature.outputs.empty()) return std::nullopt;
  const TensorInfo& output = signature.outputs.front();
  if (!Floating(output)) return std::nullopt;
  const std::string why =
      "input " + Describe(*ids) + " holds token ids, output " + Describe(output);
  if (Rank(output) == 2 && FixedDim(output, 1) >= 2) {
    return DetectedTask{"text-classification", why + " holds class scores"};
  }
  if (Rank(output) == 3) return DetectedTask{"feature-extraction", why + " holds token features"};
  return std::nullopt;
}

std::optional<DetectedTask> Tabular(const Signature& signature) {
  if (signature.inputs.size() != 1) return std::nullopt;
  const TensorInfo& input = signature.inputs.front();
  if (!Floating(input) || Rank(input) != 2) return std::nullopt;
  for (const TensorInfo& output : signature.outputs) {
    if (Integer(output) && Rank(output) == 1) {
      return DetectedTask{"tabular-classification", "input " + Describe(input) +
                                                        " is a feature table, output " +
                                                        Describe(output) + " holds labels"};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<DetectedTask> DetectTask(const Signature& signature,
                                       const std::map<std::string, int64_t>& op_histogram) {
  if (auto task = Image(signature, op_histogram)) return task;
  if (auto task = Text(signature)) return task;
  return Tabular(signature);
}

}  // namespace convgate::graph
