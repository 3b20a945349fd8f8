// float32 -> float16 conversion of an ONNX model, after onnxconverter-common's
// float16.convert_float_to_float16: float initializers and tensor attributes (Constant values,
// also inside If/Loop/Scan bodies) become float16, float value types become float16, Cast nodes to
// float become Casts to float16; nodes whose op or name is blocked stay float32 with Cast nodes
// around them; keep_io_types keeps the graph's float inputs and outputs float32 behind Casts.
//
// Two differences from onnxconverter-common, both deliberate: values outside float16's range are
// reported and only clamped when asked (onnxconverter-common silently clamps to +-1e4 and lifts
// tiny values to 1e-7, hiding what the conversion did to the weights); and Cast nodes are inserted
// in topological position, not appended to the graph.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::convert {

// The ops kept in float32 unless op_block_list says otherwise (fp16.cc explains each).
const std::set<std::string>& DefaultFp16OpBlockList();

// The half-precision conversion: float16 (`--to fp16`) or bfloat16 (`--to bf16`), one graph walk
// for both; `half_type` says which.
struct Fp16Options {
  // onnx::TensorProto::FLOAT16 or BFLOAT16.
  int32_t half_type = onnx::TensorProto::FLOAT16;
  // Default true (onnxconverter-common's is false): the converted model then takes and returns
  // what the source did, so it is a drop-in replacement and `convgate compare` can feed both the
  // same inputs.
  bool keep_io_types = true;
  std::set<std::string> op_block_list = DefaultFp16OpBlockList();
  std::set<std::string> node_block_list;  // node names
  // Values beyond +-65504 become +-inf in float16 unless clamped to +-65504.
  bool clamp = false;
  // Called with each tensor once converted, so a model whose weights are external data streams
  // them to its own data file one at a time (ExternalDataWriter::Place) instead of holding the
  // converted weights until the end. Unset: converted tensors stay in the model.
  std::function<Status(onnx::TensorProto&)> converted_sink;
};

// fp16 parameters: keep_io_types=0|1, op_block_list=A,B (added to the default list, which holds
// ops that cannot run in float16; "-A" takes A off it, "none" empties it), node_block_list=a,b,
// clamp=0|1. InvalidArgument naming an unknown parameter or value.
Result<Fp16Options> ParseFp16Params(const std::map<std::string, std::string>& params,
                                    int32_t half_type = onnx::TensorProto::FLOAT16);

// What the conversion did to float values, per tensor ("initializer 'fc.weight'").
struct Fp16RangeReport {
  int64_t overflow_values = 0;  // finite float32 values float16 cannot hold (|x| >= 65520)
  double largest_overflow = 0.0;
  std::string largest_overflow_tensor;
  std::map<std::string, int64_t> overflow_by_tensor;
  int64_t flushed_values = 0;  // nonzero values below float16's smallest subnormal: became 0
  std::map<std::string, int64_t> flushed_by_tensor;
};

struct Fp16Report {
  int64_t converted_tensors = 0;  // initializers and tensor attributes
  int64_t blocked_nodes = 0;
  std::map<std::string, int64_t> blocked_ops;  // op type -> nodes kept in float32
  // bf16: op type -> nodes kept because ONNX has no bfloat16 form of the op at the model's opset.
  std::map<std::string, int64_t> no_half_form_ops;
  int64_t opset = 0;
  int64_t casts_inserted = 0;
  Fp16RangeReport range;
  std::vector<std::string> notes;  // sentences for the conversion record
};

// Converts `model` in place. Tensors stored as external data must be anchored first
// (graph/internal/external_data.h);
// FailedPrecondition when the result fails ONNX's checker or strict type inference (an op left
// out of the block list that needs float32, or a bug), with the reason.
Result<Fp16Report> ConvertModelToFloat16(onnx::ModelProto& model, const Fp16Options& options);

// Converts one FLOAT tensor to FLOAT16 in place (raw_data, little-endian), counting what does not
// fit under `where`. REQUIRES: tensor->data_type() == FLOAT.
Status ConvertTensorToFloat16(onnx::TensorProto* tensor, bool clamp, const std::string& where,
                              Fp16RangeReport* range,
                              int32_t half_type = onnx::TensorProto::FLOAT16);

// The notes describing `range` (empty when every value fit).
std::vector<std::string> Fp16RangeNotes(const Fp16RangeReport& range, bool clamp,
                                        int32_t half_type = onnx::TensorProto::FLOAT16);

// "float16" or "bfloat16".
std::string HalfTypeName(int32_t half_type);

}  // namespace convgate::convert
