#include "convgate/convert/kinds.h"

#include <set>

#include "convert/fp16.h"
#include "convert/params.h"

namespace convgate::convert {
namespace {

std::string DefaultFp16BlockListText() {
  std::string text;
  for (const std::string& op : DefaultFp16OpBlockList()) text += (text.empty() ? "" : ", ") + op;
  return text;
}

// fp16's and bf16's parameters: one walk, one list; `format` names the narrow type, `largest`
// its largest finite value.
std::vector<ConversionParam> HalfPrecisionParams(const std::string& format,
                                                 const std::string& largest) {
  return {
      {"keep_io_types", "1",
       "float inputs and outputs stay float32 behind Cast nodes (0: they become " + format + ")"},
      {"op_block_list", DefaultFp16BlockListText(),
       "ops that stay float32 between Casts; names given are added to this default list, "
       "-NAME takes one off it, none empties it"},
      {"node_block_list", "(none)", "node names that stay float32"},
      {"clamp", "0", "1: clamp values beyond " + largest + " instead of letting them become Inf"}};
}

std::vector<ConversionKind> MakeKinds() {
  // A TorchScript source's IR inputs (openvino_export.py native).
  const std::vector<ConversionParam> kOpenvinoInputParams = {
      {"input_names", "forward()'s argument names", "TorchScript: names of the IR's inputs, a,b"},
      {"input_shape", "dynamic",
       "TorchScript: static shape of each input, in order (a,b for several)"},
      {"input_dtype", "float32", "TorchScript: dtype of each input, in order"}};
  return {
      {"opset", "opset:N", "onnx's version converter (libonnx 1.12: opsets up to 17)", {}},
      {"fp16", "fp16", "float initializers and Constant nodes to float16 (If/Loop/Scan bodies too)",
       HalfPrecisionParams("float16", "+-65504")},
      {"bf16", "bf16",
       "float initializers and Constant nodes to bfloat16 (float32's range, 8 significant bits); "
       "ONNX Runtime's CPU provider has no bfloat16 kernels, so convgate runs such a model "
       "emulated: float32 compute, every bfloat16 value rounded as it is stored",
       HalfPrecisionParams("bfloat16", "bfloat16's largest (+-3.39e38)")},
      {"int8-dynamic",
       "int8-dynamic",
       "int8 weights, activations quantized at run time: ONNX Runtime's quantize_dynamic "
       "(runtime/ort_quantize.py in the venv); judged by the quantization profile",
       {{"weight_type", "qint8", "qint8 or quint8"},
        {"per_channel", "0", "1: one scale per output channel of each weight"},
        {"op_types", "(every op it supports)", "ops to quantize, e.g. MatMul,Gemm"},
        {"node_block_list", "(none)",
         "node names left in float32 (ONNX Runtime's nodes_to_exclude; repair finds them)"}}},
      {"int8-static",
       "int8-static",
       "int8 weights and activations in QDQ form, activation ranges calibrated on samples: ONNX "
       "Runtime's quantize_static; verify calibrates on its own inputs (or --data's)",
       {{"calibration", "(verify: the gate's inputs)",
         "an .npz of samples (flat, or sample_<i>/<input>) to calibrate on"},
        {"format", "qdq", "qdq or qoperator"},
        {"calibrate_method", "minmax", "minmax, entropy or percentile"},
        {"weight_type", "qint8", "qint8 or quint8 (activations the same)"},
        {"per_channel", "0", "1: one scale per output channel of each weight"},
        {"op_types", "(every op it supports)", "ops to quantize, e.g. Conv,MatMul"},
        {"node_block_list", "(none)",
         "node names left in float32 (ONNX Runtime's nodes_to_exclude; repair finds them)"}}},
      {"ort-optimized",
       "ort-optimized:basic|extended|all",
       "ONNX Runtime's optimized graph at that level",
       {}},
      {"onnx",
       "onnx",
       "PyTorch -> ONNX with torch.onnx.export (runtime/torch_export.py) from a TorchScript file "
       "or torchvision:NAME (--shape/--dim of verify set input_shape), or from a torch.export "
       "program (.pt2) with torch.onnx.export(dynamo=True) in the venv (only opset applies)",
       {{"opset", "17", "ONNX opset of the export"},
        {"input_shape", "1x3x224x224", "shape of each input, in order (a,b for several)"},
        {"input_dtype", "float32", "dtype of each input, in order"},
        {"input_names", "forward()'s argument names ('input' for torchvision)", "a,b"},
        {"output_names", "output (output_0, output_1, ... for several)", "a,b"},
        {"dynamic_axes", "none", "batch: dim 0 of every input and output is the symbol 'batch'"},
        {"seed", "0", "weights of a torchvision architecture, and the example input"},
        {"arch", "(none)", "a torchvision architecture instead of SOURCE"}}},
      {"openvino", "openvino",
       "OpenVINO IR (OUT.xml + OUT.bin, float32 weights) from an ONNX or TorchScript file "
       "(openvino.convert_model + save_model) or a TensorFlow SavedModel folder (ovc), through "
       "runtime/openvino_export.py in the Python venv ($CONVGATE_VENV); a TorchScript model's "
       "inputs are named after forward()'s arguments; --shape/--dim of verify set input_shape",
       kOpenvinoInputParams},
      {"openvino", "openvino:fp16",
       "the same with float16-compressed weights (save_model compress_to_fp16=True)",
       kOpenvinoInputParams},
      {"openvino", "openvino:int8",
       "the same, then int8 weights and activations (FakeQuantize) by NNCF's post-training "
       "quantization (nncf.quantize) calibrated on samples; verify calibrates on its own inputs "
       "(or --data's); judged by the quantization profile",
       [&] {
         std::vector<ConversionParam> params = {
             {"calibration", "(verify: the gate's inputs)",
              "an .npz of samples (flat, or sample_<i>/<input>) to calibrate on"},
             {"preset", "performance", "NNCF's preset: performance or mixed"},
             {"node_block_list", "(none)", "node names left in float32 (NNCF's IgnoredScope)"}};
         params.insert(params.end(), kOpenvinoInputParams.begin(), kOpenvinoInputParams.end());
         return params;
       }()},
      {"optimum-openvino",
       "optimum-openvino",
       "a Hugging Face model folder (config.json + weights) through optimum-cli export openvino; "
       "the output is a folder (openvino_model.xml + .bin + configs), which the hf backend runs",
       {{"task", "auto",
         "optimum's task; auto: the verify gate's rule (graph::ResolveHfTask): config.json's "
         "pipeline_tag through the seed's map, t5/mt5/bart/mbart text2text-generation-with-past, "
         "else the architecture class (*ForCausalLM text-generation-with-past, *ForMaskedLM "
         "fill-mask, a bare *Model feature-extraction, ...), else text-generation-with-past"},
        {"model_type", "none",
         "a declared model type steering task=auto (graph::TaskOfModelType): bert "
         "feature-extraction, t5 text2text-generation-with-past, gpt text-generation-with-past, "
         "vit image-classification, clip, whisper, wav2vec2, and their relatives; an architecture "
         "of the type's family picks its own task (--model-type sets it)"},
        {"weight_format", "fp16", "fp16, int8 or int4"},
        {"group_size", "optimum's (128)", "int4 group size (must divide the hidden size)"},
        {"fallback", "int4",
         "none: no retry with int4 weights when the export runs out of memory or time"}}},
      {"optimum-onnx",
       "optimum-onnx",
       "a Hugging Face model folder through optimum-cli export onnx; the output is a folder, the "
       "record names its main model (model.onnx; decoder_model_merged.onnx, ... when split)",
       {{"task", "auto", "as for optimum-openvino"},
        {"model_type", "none", "as for optimum-openvino"}}},
      {"external",
       "external",
       "any converter command: --converter 'CMD ... {src} {out}' (argv, no shell)",
       {{"version", "sha256 of the program",
         "the converter's version, part of the cache key when hashing its program is not "
         "enough"}}},
  };
}

std::string KindList() {
  std::string list;
  for (const ConversionKind& kind : ConversionKinds()) {
    list += (list.empty() ? "" : ", ") + kind.spelling;
  }
  return list;
}

}  // namespace

const std::vector<ConversionKind>& ConversionKinds() {
  static const std::vector<ConversionKind> kKinds = MakeKinds();
  return kKinds;
}

const ConversionKind* FindConversionKind(std::string_view to) {
  const std::string_view name = to.substr(0, to.find(':'));
  const bool has_argument = to.find(':') != std::string_view::npos;
  // A spelling of its own ("openvino:int8", with parameters of its own) before the pattern
  // ("opset:N").
  for (const ConversionKind& kind : ConversionKinds()) {
    if (kind.spelling == to) return &kind;
  }
  for (const ConversionKind& kind : ConversionKinds()) {
    const bool takes_argument = kind.spelling.find(':') != std::string::npos;
    if (kind.name == name && takes_argument == has_argument) return &kind;
  }
  return nullptr;
}

Status CheckConversionRequest(const ConversionRequest& request) {
  if (!request.converter_argv.empty() && request.kind != "external") {
    return Status::InvalidArgument("--converter runs an external converter, but --to '" +
                                   request.kind + "' was asked for");
  }
  const ConversionKind* kind = FindConversionKind(request.kind);
  if (kind == nullptr) {
    return Status::InvalidArgument("unknown conversion --to '" + request.kind +
                                   "' (known: " + KindList() + ")");
  }
  std::set<std::string> known;
  for (const ConversionParam& param : kind->params) known.insert(param.name);
  return CheckKnownParams(request.params, known, request.kind);
}

}  // namespace convgate::convert
