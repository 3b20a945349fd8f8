// The "torch-export" backend: torch.export programs (.pt2, what torch.export.save writes and what
// current PyTorch produces instead of TorchScript), run by runtime/pt2_runner.py on the project
// venv's PyTorch (core/python_env.h): one runner process per loaded program serving every sample
// over the runner protocol (backends/runner/). libtorch cannot run them: a .pt2 holds an
// ExportedProgram (FX graph + state dict), which only Python's torch.export.load reads.
//
// Behaviour:
//  - signature(): the program's user inputs by name (forward()'s arguments) with their dtypes
//    and shapes; a dim torch.export made symbolic keeps its symbol ("s0"), so --dim s0=N binds
//    it. Outputs are output_0, output_1, ... and positional (Signature::positional_outputs), as
//    TorchScript's: converters do not keep an ExportedProgram's output names.
//  - No intermediate tensors. Threads: LoadOptions::intra_op_threads > 0 sets torch's.
//  - Time and errors as the openvino backend's runner (openvino_backend.h): the start (Python,
//    torch, torch.export.load) is bounded by LoadOptions::timeout_seconds, each Run by the run
//    timeout; a file torch.export.load cannot read is DataLoss with its message; no venv says to
//    run ./scripts/setup.sh. The runner is runtime/pt2_runner.py in the source tree convgate was
//    built from, or CONVGATE_PT2_RUNNER.
#pragma once

#include <memory>

#include "convgate/backends/backend.h"

namespace convgate::backends {

std::unique_ptr<Backend> CreateTorchExportBackend();

}  // namespace convgate::backends
