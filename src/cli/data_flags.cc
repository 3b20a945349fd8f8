// The data group: where inputs come from, how they are generated, where they and the outputs go.
#include "cli/flag_groups.h"
#include "convgate/core/numbers.h"
#include "convgate/core/scoped.h"
#include "convgate/core/shape.h"

namespace convgate::cli {
namespace {

// The flags that shape generated inputs, which --load-inputs makes meaningless.
constexpr const char* kGenerationFlags[] = {"--seed",  "--samples", "--fill",  "--val-range",
                                            "--shape", "--dim",     "--prompt"};

// A --shape value is "NAME:DIMS"; in Polygraphy's list form, further such values follow the flag.
bool IsShapeArgument(const std::string& arg) {
  if (arg.empty() || arg.front() == '-') return false;
  const ScopedValue scoped = SplitScoped(arg);
  return !scoped.name.empty() && ParseShape(scoped.value).ok();
}

std::string DimSymbol(const std::string& value) { return value.substr(0, value.find('=')); }

Status RefuseGenerationFlagsWithLoadedInputs(const FlagSet& flags) {
  if (!flags.Given("--load-inputs")) return Status::OK();
  for (const char* name : kGenerationFlags) {
    if (!flags.Given(name)) continue;
    return Status::InvalidArgument(
        std::string(name) + " has no effect with --load-inputs: the inputs, their shapes and " +
        "the number of samples come from '" + flags.Values("--load-inputs").front() +
        "'; drop one of the two");
  }
  return Status::OK();
}

}  // namespace

void AddDataFlags(FlagSet& flags, gate::DataOptions& options) {
  flags.SetGroup("Inputs");
  const gate::DataOptions defaults;
  inputs::InputOptions& generate = options.generate;
  flags.Add({
      Flag{.name = "--seed",
           .value_name = "N",
           .help = "Seed of convgate's own PRNG for generated inputs (the same inputs on every "
                   "machine)",
           .default_text = std::to_string(defaults.generate.seed),
           .examples = {"7"},
           .apply = [&generate](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(generate.seed, ParseUnsigned(value));
             return Status::OK();
           }},
      IntegerFlag("--samples", "N", "Number of generated samples", {"16"}, 1, 1000000,
                  generate.samples),
      Flag{.name = "--fill",
           .value_name = "KIND|NAME:KIND",
           .help = "How generated inputs are filled: zeros, ones, uniform or normal; NAME:KIND "
                   "for one input",
           .default_text = std::string(inputs::FillName(defaults.generate.fill)),
           .examples = {"normal", "mask:ones"},
           .arity = FlagArity::kPerName,
           .apply =
               [&generate](const std::string& value) { return inputs::AddFill(value, generate); }},
      Flag{.name = "--val-range",
           .value_name = "[LO,HI]|NAME:[LO,HI]",
           .help = "Value range of generated inputs, or of one input: floats uniform in [lo,hi), "
                   "integers in [lo,hi] ([lo,hi) excludes hi); normal fill has mean (lo+hi)/2 and "
                   "std (hi-lo)/2",
           .default_text = "[0,1) for floats, [0,1] for integers, [-1,1] with normal",
           .examples = {"[0,1]", "[0,1)", "[0.5,2]", "x:[0,1]", "input:0:[0,5]"},
           .arity = FlagArity::kPerName,
           .apply =
               [&generate](const std::string& value) {
                 return inputs::AddValueRange(value, generate);
               }},
      Flag{.name = "--shape",
           .aliases = {"--input-shapes"},
           .value_name = "NAME:DIMS",
           .help = "Shape of one generated input (its fixed dims must agree); names may contain "
                   "':'. --input-shapes (Polygraphy) takes several: --input-shapes a:[1,3] "
                   "b:[1,10]",
           .examples = {"x:1x3x224x224", "x:[1,3,48,192]", "input:0:1x3"},
           .arity = FlagArity::kPerName,
           .is_list_item = IsShapeArgument,
           .apply =
               [&generate](const std::string& value) { return inputs::AddShape(value, generate); }},
      Flag{.name = "--dim",
           .value_name = "SYMBOL=N",
           .help = "Value of a symbolic dimension; unbound dims are 1 and the report says so",
           .examples = {"batch=4"},
           .arity = FlagArity::kPerName,
           .scope_of = DimSymbol,
           .apply =
               [&generate](const std::string& value) {
                 return inputs::AddDimBinding(value, generate);
               }},
      Flag{.name = "--load-inputs",
           .value_name = "PATH",
           .help = "Read inputs instead of generating them: .npz or .safetensors (flat: one "
                   "sample; sample_<i>/<name> tensors: several), .npy (single-input models), a "
                   "folder of <name>.npy, or an ONNX test-case folder",
           .examples = {"inputs.npz"},
           .apply = StoreNonEmpty("path", options.load_inputs)},
      Flag{.name = "--save-inputs",
           .value_name = "PATH",
           .help = "Write the inputs used: PATH.npz, PATH.safetensors, or a folder (ONNX "
                   "test-case layout, input_K.pb); never over a file this run reads or the other "
                   "half of a test case it did not write",
           .examples = {"inputs.npz", "case_dir/"},
           // session::CheckSavePaths refuses, before anything runs, a path that would
           // lose data or is neither an .npz / .safetensors nor a folder.
           .apply = StoreNonEmpty("path", options.save_inputs)},
      Flag{.name = "--save-outputs",
           .value_name = "PATH",
           .help = "Write the outputs (run: the model's; compare: the source's) to PATH.npz, "
                   "PATH.safetensors or a folder (ONNX test-case layout: output_K.pb, beside "
                   "input_K.pb when --save-inputs names the same folder), to compare later "
                   "targets against",
           .examples = {"outputs.npz", "case_dir/"},
           .apply = StoreNonEmpty("path", options.save_outputs)},
      IntegerFlag("--threads", "N", "Intra-op threads for inference (0: the runtime's choice)",
                  {"2"}, 0, 1024, options.threads),
      IntegerFlag("--new-tokens", "N",
                  "Tokens a Hugging Face text-generation model (backend hf) generates greedily "
                  "per sample; its token ids compare exactly, its first step's logits under the "
                  "policy",
                  {"16"}, 1, 4096, options.new_tokens),
      Flag{.name = "--present-key-values",
           .help = "A Hugging Face decoder-only text-generation model (backend hf, PyTorch or an "
                   "optimum ONNX export) also returns its key/value cache after the prompt, "
                   "present.<layer>.key and .value, compared under the policy as Optimum's "
                   "export validation does (verify --to optimum-onnx turns it on; other tasks "
                   "ignore it; an OpenVINO export keeps the cache inside the model and has none)",
           .arity = FlagArity::kSwitch,
           .apply =
               [&options](const std::string&) {
                 options.present_key_values = true;
                 return Status::OK();
               }},
      Flag{.name = "--prompt",
           .value_name = "TEXT",
           .help = "Text a Hugging Face model's inputs are tokenized from, by the folder's "
                   "tokenizer.json (hf backend; without --fill, --val-range, --shape or --dim, "
                   "its inputs are made for its task: ids in the vocabulary, masks of ones, pixel "
                   "values at the config's size)",
           .default_text = "'Hello' for generation, a test sentence for encoders",
           .examples = {"'The capital of France is'"},
           .apply = StoreNonEmpty("text", options.prompt)},
      Flag{.name = "--ort-optimization",
           .value_name = "LEVEL",
           .help = "ONNX Runtime's graph optimization level for ort models: disabled, basic, "
                   "extended (every fusion) or all (also the NCHWc layout pass ORT's own default "
                   "runs, which copies every Conv weight: about twice the load time and memory)",
           .default_text = backends::GraphOptimizationName(options.graph_optimization),
           .examples = {"all", "disabled"},
           .apply = [&options](const std::string& value) -> Status {
             for (auto level :
                  {backends::GraphOptimization::kDisabled, backends::GraphOptimization::kBasic,
                   backends::GraphOptimization::kExtended, backends::GraphOptimization::kAll}) {
               if (value != backends::GraphOptimizationName(level)) continue;
               options.graph_optimization = level;
               return Status::OK();
             }
             return Status::InvalidArgument("'" + value +
                                            "' is not a level: disabled, basic, extended, all");
           }},
  });
  flags.AddCheck(RefuseGenerationFlagsWithLoadedInputs);
}

}  // namespace convgate::cli
