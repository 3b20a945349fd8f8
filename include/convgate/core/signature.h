// What a model (or a set of saved outputs) declares about its inputs and outputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/dtype.h"

namespace convgate {

// One declared dimension: a fixed size, a named symbol ("batch"), or unknown (neither).
struct Dim {
  int64_t value = -1;  // >= 0 when fixed
  std::string symbol;  // non-empty when symbolic

  bool is_fixed() const { return value >= 0; }
  static Dim Fixed(int64_t v) { return Dim{v, ""}; }
  static Dim Symbolic(std::string s) { return Dim{-1, std::move(s)}; }
  static Dim Unknown() { return Dim{}; }
};

// What an ONNX graph shows about the values an input takes, beyond what it declares
// (graph/input_hints.cc), for generated inputs: a token-id input must index inside its embedding
// table, an image input must have the channels its first Conv takes. Never checked against loaded
// data; zero/empty when nothing was found.
struct InputHint {
  int64_t index_rows = 0;    // > 0: an integer input that indexes a table of this many rows
  std::string index_source;  // "Gather '/wte/Gather' on 'transformer.wte.weight' (400 rows)"
  // A bool or integer input named like a mask ("attention_mask"): HF models take ones for the
  // tokens to attend to, and random bits can mask out a whole row (a softmax over nothing is NaN).
  bool mask = false;
  int64_t channels = 0;         // > 0: the size dim 1 (NCHW) must have
  std::string channels_source;  // "Conv '/conv1/Conv' (weight 'conv1.weight' [16, 3, 3, 3])"
  // Sizes the config.json of a Hugging Face export beside the model gives symbolic dims
  // (optimum's ViT declares [batch_size, num_channels, height, width]; its patch Conv refuses 1).
  struct DimDefault {
    size_t axis = 0;
    int64_t value = 0;
    std::string source;  // "config.json beside the model: image_size 32"
  };
  std::vector<DimDefault> dim_defaults;
};

struct TensorInfo {
  std::string name;
  // nullopt when the declared element type is one convgate cannot hold (complex, fp8, ...), or
  // when the model declares none (TorchScript); type_name then says what it is (kUntypedTensor
  // for a tensor of any element type).
  std::optional<DType> dtype;
  std::string type_name;   // "float32", "string", "seq(tensor(float))", "tensor", ...
  bool has_shape = false;  // false when the model declares no shape at all (rank unknown)
  std::vector<Dim> shape;  // valid when has_shape
  InputHint hint;          // inputs of ONNX models only
};

// type_name of a tensor input whose element type the model does not declare (TorchScript's
// forward() says only "Tensor"); dtype is then nullopt and has_shape false.
inline constexpr std::string_view kUntypedTensor = "tensor";

struct Signature {
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;
  // The backend takes inputs by position: Model::Run feeds the TensorMap's tensors in the order
  // given, whatever their names, and input names (Python argument names for TorchScript) need not
  // match any other format's. Another model's dataset is passed in that model's input order.
  bool positional_inputs = false;
  // The backend names outputs by position, output_0, output_1, ... (a model returning a dict
  // keeps its keys), and `outputs` is empty: they are unknown until the model runs. Comparisons
  // rename them in order to the other side's output names.
  bool positional_outputs = false;

  const TensorInfo* FindInput(const std::string& name) const;
  const TensorInfo* FindOutput(const std::string& name) const;
};

// "[batch, 3, 224, 224]"; "?" for an unknown dim; "(no shape)" when has_shape is false.
std::string FormatDims(const TensorInfo& info);

}  // namespace convgate
