// Reading what an ONNX graph shows about the values its inputs take (core/signature.h InputHint),
// so that generated inputs exercise the model instead of failing in it: token ids drawn from
// [0, 1] say nothing about a 50k-row embedding, and a symbolic channel dim bound to 1 fails in
// the first Conv. Internal to src/graph.
#pragma once

#include <onnx/onnx_pb.h>

#include "convgate/core/signature.h"

namespace convgate::graph {

// Sets the hint of each input of `signature` (the main graph's inputs): mask for a bool or
// integer input named like one; for an input that
//   - reaches the indices of a Gather whose data is an initializer or Constant of rank >= 2
//     (an embedding table), directly or through Cast, Reshape, Unsqueeze, Squeeze, Flatten,
//     Identity: index_rows = the table's rows;
//   - reaches input 0 of a Conv, directly or through Cast, Identity, whose weight is an
//     initializer or Constant [M, C/group, ...], and declares rank 4: channels = C.
// Only dims the initializers declare are read, so a structure-only parse (no weight data) works.
void AddInputHints(const onnx::GraphProto& graph, Signature& signature);

}  // namespace convgate::graph
