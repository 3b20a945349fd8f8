// What runs a model. A Backend loads model files into Models; a Model reports its signature and runs
// samples. Implementations live in src/backends/<name>/ and are the only code that includes their
// SDK's headers; their exceptions never escape (they become Status).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

struct LoadOptions {
  // Threads for one inference; 0 lets the runtime choose. Comparisons are deterministic only with
  // a fixed thread count for some kernels, so the CLI passes what the user asked for.
  int intra_op_threads = 0;
};

class Model {
 public:
  virtual ~Model() = default;

  virtual const Signature& signature() const = 0;

  // Runs one sample. `output_names` empty means all declared outputs, in declaration order;
  // otherwise exactly those, in that order. A name may be any intermediate tensor the backend can
  // expose (see Backend::SupportsIntermediates). Errors name the model path and, where the runtime
  // says, the node.
  virtual Result<TensorMap> Run(const TensorMap& inputs,
                                const std::vector<std::string>& output_names) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "ort", "torch", "opencv", "exec", "outputs".
  virtual std::string name() const = 0;
  // Runtime version, e.g. "1.29.0".
  virtual std::string version() const = 0;
  virtual bool SupportsIntermediates() const = 0;

  virtual Result<std::unique_ptr<Model>> Load(const std::filesystem::path& model_path,
                                              const LoadOptions& options) = 0;
};

}  // namespace convgate::backends
