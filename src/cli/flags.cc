#include "flags.h"

#include <unistd.h>

#include <cstdlib>

namespace convgate::cli {

void AddDataFlags(CLI::App& app, DataFlags& flags) {
  app.add_option("--seed", flags.seed, "Seed for generated inputs (default 1)");
  app.add_option("--samples", flags.samples, "Number of generated samples (default 1)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--fill", flags.fill,
                 "How generated inputs are filled: zeros|ones|uniform|normal, or NAME:KIND for "
                 "one input (default uniform)");
  app.add_option("--val-range", flags.val_range,
                 "Value range [lo,hi] for generated inputs, or NAME:[lo,hi] for one input "
                 "(default [0,1) for floats, [0,1] for integers; normal uses mean (lo+hi)/2, "
                 "std (hi-lo)/2 and defaults to [-1,1])");
  app.add_option("--shape", flags.shape,
                 "Shape of one generated input: NAME:1x3x224x224 (names may contain ':')");
  app.add_option("--dim", flags.dim,
                 "Value of a symbolic dimension: SYMBOL=VALUE (unbound dims default to 1)");
  app.add_option("--load-inputs", flags.load_inputs,
                 "Read inputs instead of generating them: .npz (flat, or sample_<i>/<name> for "
                 "several samples), .npy, a folder of <name>.npy, or an ONNX test-case folder");
  app.add_option("--save-inputs", flags.save_inputs,
                 "Write the inputs used to an .npz (or, without .npz, an ONNX test-case folder)");
  app.add_option("--save-outputs", flags.save_outputs,
                 "Write the outputs (run: the model's; compare: the source's) to an .npz (or, "
                 "without .npz, an ONNX test-case folder), to compare later targets against");
  app.add_option("--threads", flags.threads,
                 "Intra-op threads for inference (default: the runtime's choice)")
      ->check(CLI::Range(0, 1024));
}

Result<gate::DataOptions> ToDataOptions(const DataFlags& flags) {
  gate::DataOptions options;
  options.generate.seed = flags.seed;
  options.generate.samples = flags.samples;
  for (const std::string& text : flags.fill) {
    CONVGATE_RETURN_IF_ERROR(inputs::AddFill(text, options.generate).WithContext("--fill"));
  }
  for (const std::string& text : flags.val_range) {
    CONVGATE_RETURN_IF_ERROR(
        inputs::AddValueRange(text, options.generate).WithContext("--val-range"));
  }
  for (const std::string& text : flags.shape) {
    CONVGATE_RETURN_IF_ERROR(inputs::AddShape(text, options.generate).WithContext("--shape"));
  }
  for (const std::string& text : flags.dim) {
    CONVGATE_RETURN_IF_ERROR(inputs::AddDimBinding(text, options.generate).WithContext("--dim"));
  }
  if (!flags.load_inputs.empty()) options.load_inputs = flags.load_inputs;
  if (!flags.save_inputs.empty()) options.save_inputs = flags.save_inputs;
  if (!flags.save_outputs.empty()) options.save_outputs = flags.save_outputs;
  options.threads = flags.threads;
  return options;
}

void AddOutputFlags(CLI::App& app, OutputFlags& flags) {
  app.add_option("--out", flags.out_dir,
                 "Folder for report.json, verify_result.json and junit.xml (created if needed)");
  app.add_flag("--json", flags.json, "Print report.json to stdout instead of the table");
  app.add_option("--color", flags.color, "Colour the table: auto|always|never (default auto)")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

bool UseColor(const OutputFlags& flags) {
  if (flags.color == "always") return true;
  if (flags.color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || no_color[0] == '\0');
}

}  // namespace convgate::cli
