// The data group: where inputs come from, how they are generated, where they and the outputs go.
#include "cli/flag_groups.h"
#include "convgate/core/numbers.h"
#include "convgate/core/scoped.h"
#include "convgate/core/shape.h"
#include "convgate/loaders/data_spec.h"

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

// How --data files are read: each flag has an effect only with a --data of its kind.
constexpr std::pair<const char*, const char*> kLoaderFlags[] = {
    {"--resize", "image"},       {"--resize-mode", "image"}, {"--color-order", "image"},
    {"--image-layout", "image"}, {"--normalize", "image"},   {"--pixel-scale", "image"},
    {"--sample-rate", "audio"},  {"--pad-id", "tokens"},     {"--pad-id", "text"},
    {"--tokenizer", "text"},
};

// The kinds of --data a loader flag has an effect with ("tokens:PATH or text:PATH").
std::string KindsOf(std::string_view flag) {
  std::string kinds;
  for (const auto& [name, kind] : kLoaderFlags) {
    if (flag == name) kinds += (kinds.empty() ? "" : " or ") + std::string(kind) + ":PATH";
  }
  return kinds;
}

Status CheckDataFlags(const FlagSet& flags, gate::DataOptions& options) {
  if (flags.Given("--data") && flags.Given("--load-inputs")) {
    return Status::InvalidArgument(
        "--data and --load-inputs both say where the inputs come from: give one");
  }
  for (const auto& [name, kind] : kLoaderFlags) {
    if (!flags.Given(name)) continue;
    const auto used = [&](std::string_view flag) {
      for (const auto& [other, other_kind] : kLoaderFlags) {
        if (other != flag) continue;
        for (const loaders::DataSpec& spec : options.loaders.specs) {
          if (loaders::DataKindName(spec.kind) == other_kind) return true;
        }
      }
      return false;
    };
    if (!used(name)) {
      return Status::InvalidArgument(std::string(name) + " has no effect without --data " +
                                     KindsOf(name));
    }
  }
  // With --data the samples are as many as the files give; --samples keeps the first N.
  if (flags.Given("--data") && flags.Given("--samples")) {
    options.loaders.max_samples = options.generate.samples;
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
      Flag{.name = "--data",
           .value_name = "KIND:[INPUT=]PATH",
           .help = "Read an input from data files instead of generating it (repeatable, one per "
                   "input; inputs without one are generated): image (JPEG, PNG, BMP, TIFF, WebP), "
                   "audio (WAV), tokens (JSON or JSONL token ids), text (.txt, one text per line, "
                   "tokenized by a tokenizer.json) or table (CSV); PATH is a file, "
                   "a folder (sorted) or a glob. One sample per file (per audio frame, token "
                   "sequence or CSV row), a batch of them when the input's batch dim is fixed",
           .examples = {"image:photos/", "image:x=photos/*.jpg", "audio:clips/",
                        "tokens:input_ids=ids.jsonl", "text:input_ids=sentences.txt",
                        "table:rows.csv"},
           .arity = FlagArity::kRepeated,
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(loaders::DataSpec spec, loaders::ParseDataSpec(value));
             options.loaders.specs.push_back(std::move(spec));
             return Status::OK();
           }},
      Flag{.name = "--resize",
           .value_name = "WxH",
           .help = "Size images are fitted to (--data image); needed when the input's height or "
                   "width is dynamic",
           .default_text = "the input's own",
           .examples = {"320x320", "224x224"},
           .apply =
               [&options](const std::string& value) {
                 return loaders::ParseResize(value, options.loaders.image);
               }},
      Flag{.name = "--resize-mode",
           .value_name = "stretch|letterbox|crop",
           .help = "How images are fitted: stretched to the size, letterboxed (aspect kept, "
                   "padded with grey 114 as YOLO exports expect) or centre-cropped (aspect kept, "
                   "as torchvision's evaluation transform)",
           .default_text = "stretch",
           .examples = {"letterbox", "crop"},
           .apply =
               [&options](const std::string& value) {
                 return loaders::ParseFit(value, options.loaders.image);
               }},
      Flag{.name = "--color-order",
           .value_name = "rgb|bgr",
           .help = "Channel order of colour images (grey and alpha follow the input's channel "
                   "count: 1 or 4); OpenCV-trained models often take bgr",
           .default_text = "rgb",
           .examples = {"bgr"},
           .apply =
               [&options](const std::string& value) {
                 return loaders::ParseColorOrder(value, options.loaders.image);
               }},
      Flag{.name = "--image-layout",
           .value_name = "nchw|nhwc|auto",
           .help = "Where an image input keeps its channels (auto: the dim of size 1, 3 or 4, or "
                   "what its first Conv reads)",
           .default_text = "auto",
           .examples = {"nhwc"},
           .apply =
               [&options](const std::string& value) {
                 return loaders::ParseLayout(value, options.loaders.image);
               }},
      Flag{.name = "--normalize",
           .value_name = "imagenet|none|MEAN/STD",
           .help = "Per-channel normalization of image pixels after scaling: value = (pixel x "
                   "scale - mean) / std; imagenet is mean 0.485,0.456,0.406 std 0.229,0.224,0.225",
           .default_text = "none",
           .examples = {"imagenet", "0.5/0.5", "0.485,0.456,0.406/0.229,0.224,0.225"},
           .apply =
               [&options](const std::string& value) {
                 return loaders::ParseNormalize(value, options.loaders.image);
               }},
      Flag{.name = "--pixel-scale",
           .value_name = "X",
           .help = "Factor image pixels (0-255) are multiplied by before --normalize",
           .default_text = "1/255 for floating-point inputs, 1 for integer ones",
           .examples = {"1", "0.00392156862745098"},
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(double scale, ParseNumber(value, 1e-12, 1e12));
             options.loaders.image.scale = scale;
             return Status::OK();
           }},
      Flag{.name = "--sample-rate",
           .value_name = "HZ",
           .help = "Sample rate the model takes (--data audio): a WAV file at another rate is "
                   "refused, never resampled",
           .default_text = "any file's rate, noted in the report",
           .examples = {"16000"},
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(int64_t rate, ParseInteger(value, 1, 10000000));
             options.loaders.audio.sample_rate = static_cast<int>(rate);
             return Status::OK();
           }},
      Flag{.name = "--pad-id",
           .value_name = "ID",
           .help = "Token id that pads sequences to the input's length (--data tokens)",
           .default_text = "0",
           .examples = {"1"},
           .apply = [&options](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(const int64_t id, ParseInteger(value, INT64_MIN, INT64_MAX));
             options.loaders.tokens.pad_id = id;
             return Status::OK();
           }},
      Flag{.name = "--tokenizer",
           .value_name = "PATH",
           .help = "The tokenizer.json --data text uses (run by the venv's tokenizers package)",
           .default_text = "tokenizer.json beside the model, or in its folder",
           .examples = {"bert/tokenizer.json"},
           .apply = StoreNonEmpty("path", options.loaders.tokens.tokenizer)},
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
      OptimizationFlag("--ort-optimization", "ort models", options.graph_optimization),
      IntegerFlag("--inter-op-threads", "N",
                  "Threads ONNX Runtime runs independent nodes on (above 1: its parallel "
                  "execution mode; 0: sequential)",
                  {"2"}, 0, 1024, options.inter_op_threads),
  });
  flags.AddCheck(RefuseGenerationFlagsWithLoadedInputs);
  flags.AddCheck([&options](const FlagSet& flags) { return CheckDataFlags(flags, options); });
}

void AddCoverageFlag(FlagSet& flags, bool& min_coverage) {
  flags.SetGroup("Inputs");
  flags.Add({SwitchFlag("--min-coverage",
                        "Fail the gate when the inputs do not exercise the model: a source output "
                        "constant on every sample, or saturated at 0/1 (a sigmoid or softmax at "
                        "its bounds); without it that is a warning",
                        min_coverage)});
}

}  // namespace convgate::cli
