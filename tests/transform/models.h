// Small ONNX models (ONNX text) with the patterns each transform pass rewrites, shared by the
// unit tests and the CLI tests. torch.onnx.export in eval mode already folds BatchNorm and drops
// Dropout, so these are written by hand.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace convgate::testing {

// Conv (with bias) -> BatchNormalization (epsilon `epsilon`, variances in [0.05, 0.3], so
// dropping epsilon = 0.1 visibly changes the result) -> Relu. x [1,3,6,6] -> y [1,4,6,6].
std::string ConvBatchNormModel(float epsilon = 0.1f);

// MatMul(x [2,4], W [4,3]) + b [3] -> Relu -> y; and the same on a 3-D x [2,2,4] -> z (which
// Gemm cannot take).
std::string MatMulAddModel();

// y = x / c1 (initializer) ; z = x / c2 (Constant node); w = x / zeros (left alone).
std::string DivModel();

// t = (c1 + c2) * c3 from initializers and a Constant node, y = x + t.
std::string ConstantChainModel();

// x -> Identity -> Relu -> Dropout -> Identity -> y (graph output), and x -> Identity -> z
// (graph output fed by a graph input: stays).
std::string IdentityModel();

// Three MatMuls of x [2,4] with W1 [4,3], W2 [4,5], W3 [4,2] -> three outputs; opset `opset`
// (Split takes its sizes as an input from 13, as an attribute before).
std::string ParallelMatMulModel(int opset = 17);

// Conv -> BatchNormalization pairs that fold_batchnorm must leave alone, one per reason: the
// BatchNorm reads a Relu (not a Conv), one is in training mode (training_mode = 1, opset 15), one
// Conv output is also a graph output, and one Conv weight is computed (w * 1 by a Mul over a graph
// input). x [1,3,6,6] -> y1..y4.
std::string UnfoldableBatchNormModel();

// `model` with every initializer turned into a Constant node at the front of the graph holding
// the same tensor (raw_data), as paddle2onnx and other exporters store weights.
onnx::ModelProto WeightsAsConstantNodes(onnx::ModelProto model);

// `model` with every node input that names an initializer reading it through an Identity node
// (one per initializer, "<name>_identity", at the front), as PyTorch exports read weights.
onnx::ModelProto WeightsThroughIdentity(onnx::ModelProto model);

}  // namespace convgate::testing
