#include "convgate/session/run_bytes.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "convgate/core/numbers.h"
#include "convgate/core/units.h"

namespace convgate::session {
namespace {

// One sample's input shapes by name, for binding the symbols of the outputs.
using InputShapes = std::map<std::string, std::vector<int64_t>>;

// The largest tensor of a kind seen so far, for the message.
struct Largest {
  int64_t bytes = -1;
  std::string text;  // "input 'x' float32[1, 1024, 1024, 1024]"

  void Offer(int64_t candidate, const std::string& kind, const std::string& name, DType dtype,
             const std::string& dims) {
    if (candidate <= bytes) return;
    bytes = candidate;
    text = kind + " '" + name + "' " + std::string(DTypeName(dtype)) + dims;
  }
};

struct Footprint {
  int64_t input_bytes = 0;
  int64_t output_bytes = 0;
  size_t samples = 0;
  Largest largest_input;
  Largest largest_output;
};

int64_t TensorBytes(const Tensor& tensor) {
  if (tensor.dtype() != DType::kString) return static_cast<int64_t>(tensor.byte_size());
  int64_t bytes = 0;
  for (const std::string& value : tensor.strings()) {
    bytes = SaturatingAdd(bytes, static_cast<int64_t>(value.size()));
  }
  return bytes;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    text += (axis == 0 ? "" : ", ") + std::to_string(dims[axis]);
  }
  return text + "]";
}

// The declared symbols of `signature`'s inputs, bound from one sample's shapes.
std::map<std::string, int64_t> BindSymbols(const Signature& signature, const InputShapes& shapes) {
  std::map<std::string, int64_t> bound;
  for (const TensorInfo& input : signature.inputs) {
    auto found = shapes.find(input.name);
    if (!input.has_shape || found == shapes.end() || found->second.size() != input.shape.size()) {
      continue;
    }
    for (size_t axis = 0; axis < input.shape.size(); ++axis) {
      const Dim& dim = input.shape[axis];
      if (!dim.is_fixed() && !dim.symbol.empty()) bound.emplace(dim.symbol, found->second[axis]);
    }
  }
  return bound;
}

// One sample's outputs of a model, where their dtypes and shapes are known; others count 0.
int64_t OutputBytes(const Signature& signature, const InputShapes& shapes, Largest& largest) {
  const std::map<std::string, int64_t> bound = BindSymbols(signature, shapes);
  int64_t total = 0;
  for (const TensorInfo& output : signature.outputs) {
    if (!output.dtype || *output.dtype == DType::kString || !output.has_shape) continue;
    std::vector<int64_t> dims;
    for (const Dim& dim : output.shape) {
      auto symbol = bound.find(dim.symbol);
      if (dim.is_fixed()) {
        dims.push_back(dim.value);
      } else if (!dim.symbol.empty() && symbol != bound.end()) {
        dims.push_back(symbol->second);
      } else {
        break;  // a dim nothing binds: the size is unknown until the model runs
      }
    }
    if (dims.size() != output.shape.size()) continue;
    int64_t bytes = static_cast<int64_t>(DTypeSize(*output.dtype));
    for (int64_t dim : dims) bytes = SaturatingMul(bytes, dim);
    largest.Offer(bytes, "output", output.name, *output.dtype, DimsText(dims));
    total = SaturatingAdd(total, bytes);
  }
  return total;
}

// The outputs `held` adds to one sample whose inputs have `shapes`.
int64_t HeldOutputBytes(const HeldOutputs& held, const InputShapes& shapes, size_t samples,
                        Largest& largest) {
  int64_t total = 0;
  for (const HeldOutputs::ModelOutputs& model : held.models) {
    const int64_t one = OutputBytes(*model.signature, shapes, largest);
    const int64_t copies = model.every_sample ? static_cast<int64_t>(samples) : 1;
    total = SaturatingAdd(total, SaturatingMul(one, copies));
  }
  return total;
}

Status Verdict(const Footprint& footprint, const HeldOutputs& held, int64_t max_run_bytes) {
  const int64_t outputs = SaturatingAdd(footprint.output_bytes, held.saved_bytes);
  const int64_t total = SaturatingAdd(footprint.input_bytes, outputs);
  if (total <= max_run_bytes) return Status::OK();
  std::string inputs = FormatBytes(footprint.input_bytes);
  if (footprint.largest_input.bytes >= 0) {
    inputs += " (" +
              (footprint.samples > 1 ? std::to_string(footprint.samples) + " samples; largest "
                                     : std::string()) +
              footprint.largest_input.text + ")";
  }
  std::string message;
  if (outputs == 0) {
    message = "the inputs of this run need " + inputs;
  } else {
    message = "this run needs " + FormatBytes(total) + " of tensors: its inputs " + inputs +
              " and its outputs " + FormatBytes(outputs);
    if (footprint.largest_output.bytes >= 0) {
      message += " (largest " + footprint.largest_output.text + ")";
    }
  }
  return Status::FailedPrecondition(message + ", over the limit of " + FormatBytes(max_run_bytes) +
                                    " (--max-run-bytes; raise it if the machine can hold that "
                                    "much, or run smaller inputs)");
}

}  // namespace

Status CheckPlannedRunBytes(const std::vector<inputs::PlannedInput>& planned, size_t samples,
                            const HeldOutputs& held, int64_t max_run_bytes) {
  Footprint footprint;
  footprint.samples = samples;
  InputShapes shapes;
  int64_t one_sample = 0;
  for (const inputs::PlannedInput& input : planned) {
    const int64_t bytes =
        SaturatingMul(input.shape.NumElements(), static_cast<int64_t>(DTypeSize(input.dtype)));
    one_sample = SaturatingAdd(one_sample, bytes);
    shapes[input.name] = input.shape.dims();
    footprint.largest_input.Offer(bytes, "input", input.name, input.dtype,
                                  DimsText(input.shape.dims()));
  }
  footprint.input_bytes = SaturatingMul(one_sample, static_cast<int64_t>(samples));
  footprint.output_bytes = HeldOutputBytes(held, shapes, samples, footprint.largest_output);
  return Verdict(footprint, held, max_run_bytes);
}

Status CheckLoadedRunBytes(const inputs::Dataset& dataset, const HeldOutputs& held,
                           int64_t max_run_bytes) {
  Footprint footprint;
  // A streamed dataset holds its first sample and the one running; outputs kept for every sample
  // (--save-outputs) count them all.
  footprint.samples = dataset.size();
  for (const TensorMap& sample : dataset.samples) {
    InputShapes shapes;
    for (const TensorMap::Entry& entry : sample) {
      const int64_t bytes = TensorBytes(entry.tensor);
      footprint.input_bytes =
          SaturatingAdd(footprint.input_bytes, dataset.is_streamed() ? 2 * bytes : bytes);
      shapes[entry.name] = entry.tensor.shape().dims();
      footprint.largest_input.Offer(bytes, "input", entry.name, entry.tensor.dtype(),
                                    DimsText(entry.tensor.shape().dims()));
    }
    // Samples may differ in shape: the largest outputs of any sample are the ones to hold.
    Largest largest;
    const int64_t outputs = HeldOutputBytes(held, shapes, footprint.samples, largest);
    if (outputs > footprint.output_bytes) {
      footprint.output_bytes = outputs;
      footprint.largest_output = largest;
    }
  }
  return Verdict(footprint, held, max_run_bytes);
}

int64_t BytesOf(const TensorMap& sample) {
  int64_t bytes = 0;
  for (const TensorMap::Entry& entry : sample)
    bytes = SaturatingAdd(bytes, TensorBytes(entry.tensor));
  return bytes;
}

int64_t BytesOf(const std::vector<TensorMap>& samples) {
  int64_t bytes = 0;
  for (const TensorMap& sample : samples) bytes = SaturatingAdd(bytes, BytesOf(sample));
  return bytes;
}

}  // namespace convgate::session
