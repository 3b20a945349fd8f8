// Pieces of the float16 conversion around the graph walk: unique names, the float value set,
// keep_io_types casts, validation and the notes (internal to src/convert).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "convert/fp16.h"
#include "convgate/core/status.h"
#include "convgate/graph/internal/cast_node.h"

namespace convgate::convert {

// Names not used anywhere in a model (values and nodes, subgraphs included).
class NameGenerator {
 public:
  explicit NameGenerator(const onnx::ModelProto& model);
  // `base` if free, else base_1, base_2, ...; the name returned is taken from then on.
  std::string Unique(const std::string& base);

 private:
  std::unordered_set<std::string> taken_;
};

// Every value typed float32 before conversion, in all graphs: declared types plus what ONNX
// shape inference finds (on a copy; the converted model gets no inferred value_info).
std::unordered_set<std::string> FloatValueNames(const onnx::ModelProto& model);

using graph::MakeCast;
void AddValueInfo(onnx::GraphProto* graph, const std::string& name, int elem_type);

// keep_io_types: a Cast to float16 after each float graph input and a Cast to float32 before
// each float graph output produced by a node; nodes use the float16 names (`renames`).
struct KeepIoCasts {
  std::unordered_map<std::string, std::string> renames;
  std::vector<onnx::NodeProto> input_casts;
  std::vector<onnx::NodeProto> output_casts;
  std::vector<std::string> float16_values;
};
KeepIoCasts PlanKeepIoCasts(const onnx::GraphProto& graph, NameGenerator& names, int32_t half_type);
// Puts the casts first and last in the graph; returns how many were added.
int64_t ApplyKeepIoCasts(KeepIoCasts& casts, onnx::GraphProto& graph, int32_t half_type);

// ONNX's checker, then strict type inference (which catches a float32/float16 mix the checker
// does not). Strict inference is skipped, with a note, when it already fails on `source`.
Status ValidateFloat16Model(const onnx::ModelProto& model, const onnx::ModelProto& source,
                            std::vector<std::string>& notes, int32_t half_type);

// Sentences for the conversion record: tensors converted, nodes kept float32, range problems.
std::vector<std::string> DescribeFp16(const Fp16Report& report, const Fp16Options& options);

}  // namespace convgate::convert
