// Factory for the libtorch backend ("torch"): TorchScript models (.pt, .pth, .torchscript).
// Deliberately free of libtorch headers so the registry can include it; the one file that
// includes them is torch_backend.cc (a TU including torch/script.h takes ~15-20 s to compile).
//
// What TorchScript declares, and so what the signature says:
//  - inputs: forward()'s arguments after self, by name, in order. A Tensor argument has no
//    declared dtype or shape (dtype nullopt, type_name kUntypedTensor, has_shape false); another
//    type keeps its TorchScript name ("int", "List[Tensor]") and cannot be fed. Arguments with a
//    default value are left at their default and are not listed.
//  - outputs: none until the model runs (positional_outputs).
// Both positional_inputs and positional_outputs are set: Run takes the TensorMap's tensors in
// order (the count must match: FailedPrecondition naming the model), and names the outputs
// output_0, output_1, ... in order: a returned Tensor is output_0, a tuple or list (nested ones
// flattened in order) gives one output per tensor, a Dict[str, Tensor] keeps its keys.
// Input and output dtypes: float32/64, float16, bfloat16, int8/16/32/64, uint8, bool (libtorch has
// no uint16/32/64: Unimplemented naming the input or output).
// Run executes under torch::NoGradGuard on a module in eval() mode. LoadOptions::intra_op_threads
// > 0 sets libtorch's process-wide thread count (at::set_num_threads) once per process.
// Thread safety: callers serialize Run calls on one Model.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateTorchBackend();

}  // namespace convgate::backends
