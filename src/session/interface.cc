#include "convgate/session/interface.h"

#include <algorithm>
#include <cstring>

#include "convgate/core/join.h"
#include "convgate/core/tensor_copy.h"
#include "convgate/session/data_inputs.h"

namespace convgate::session {
namespace {

std::vector<int64_t> Permuted(const std::vector<int64_t>& dims, bool to_nhwc) {
  if (dims.size() != 4) return dims;
  return to_nhwc ? std::vector<int64_t>{dims[0], dims[2], dims[3], dims[1]}
                 : std::vector<int64_t>{dims[0], dims[3], dims[1], dims[2]};
}

// The data set's dims as the target takes them: NCHW to NHWC when `transpose`.
std::vector<int64_t> AsTargetTakes(const std::vector<int64_t>& dims, bool transpose) {
  return transpose ? Permuted(dims, true) : dims;
}

bool Fits(const TensorInfo& declared, const std::vector<int64_t>& dims) {
  if (!declared.has_shape) return true;
  if (declared.shape.size() != dims.size()) return false;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (declared.shape[axis].is_fixed() && declared.shape[axis].value != dims[axis]) return false;
  }
  return true;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    text += (axis ? ", " : "") + std::to_string(dims[axis]);
  }
  return text + "]";
}

// "x" and "x:0" name the same tensor (TensorFlow's output index suffix).
bool SameButSuffix(const std::string& a, const std::string& b) {
  return a + ":0" == b || b + ":0" == a;
}

bool NhwcFor(const InterfaceOptions& options, const std::string& name) {
  auto found = options.target_layout.find(name);
  if (found == options.target_layout.end()) found = options.target_layout.find("");
  return found != options.target_layout.end() && found->second == TensorLayout::kNhwc;
}

const std::string* MappedTarget(const InterfaceOptions& options, const std::string& source) {
  for (const auto& [from, to] : options.map) {
    if (from == source) return &to;
  }
  return nullptr;
}

}  // namespace

Status AddMapping(std::string_view text, InterfaceOptions& options) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size()) {
    return Status::InvalidArgument("'" + std::string(text) +
                                   "' is not SOURCE_NAME=TARGET_NAME, e.g. x=input.1");
  }
  const std::string source(text.substr(0, equals));
  if (MappedTarget(options, source) != nullptr) {
    return Status::InvalidArgument("--map names '" + source + "' twice");
  }
  options.map.emplace_back(source, std::string(text.substr(equals + 1)));
  return Status::OK();
}

Status AddTargetLayout(std::string_view text, InterfaceOptions& options) {
  const size_t colon = text.rfind(':');
  const std::string name =
      colon == std::string_view::npos ? "" : std::string(text.substr(0, colon));
  std::string layout(colon == std::string_view::npos ? text : text.substr(colon + 1));
  std::transform(layout.begin(), layout.end(), layout.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (layout != "nhwc" && layout != "nchw") {
    return Status::InvalidArgument("'" + std::string(text) + "' is not nhwc, nchw or NAME:nhwc");
  }
  options.target_layout[name] = layout == "nhwc" ? TensorLayout::kNhwc : TensorLayout::kAsIs;
  return Status::OK();
}

Result<Tensor> TransposeLayout(const Tensor& tensor, bool to_nhwc) {
  const std::vector<int64_t>& dims = tensor.shape().dims();
  if (dims.size() != 4 || tensor.dtype() == DType::kString) {
    return Status::InvalidArgument("only 4-D numeric tensors change layout, not " +
                                   tensor.Describe());
  }
  CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(Permuted(dims, to_nhwc)));
  CONVGATE_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(tensor.dtype(), shape));
  const size_t size = DTypeSize(tensor.dtype());
  // In NCHW terms: n, c, h, w; `to_nhwc` reads NCHW and writes NHWC, else the reverse.
  const int64_t n = dims[0];
  const int64_t c = to_nhwc ? dims[1] : dims[3];
  const int64_t h = to_nhwc ? dims[2] : dims[1];
  const int64_t w = to_nhwc ? dims[3] : dims[2];
  const std::byte* in = tensor.bytes().data();
  std::byte* dst = out.bytes().data();
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((b * c + ch) * h + y) * w + x;
          const int64_t nhwc = ((b * h + y) * w + x) * c + ch;
          const int64_t from = to_nhwc ? nchw : nhwc;
          const int64_t to = to_nhwc ? nhwc : nchw;
          std::memcpy(dst + to * size, in + from * size, size);
        }
      }
    }
  }
  return out;
}

Result<InterfaceBinding> InterfaceBinding::Bind(const InterfaceOptions& options,
                                                const TensorMap& sample, const Signature& target,
                                                SideRecord& record) {
  InterfaceBinding binding;
  binding.options_ = &options;
  std::vector<bool> taken(target.inputs.size(), false);
  const auto index_of = [&](const std::string& name) -> int {
    for (size_t idx = 0; idx < target.inputs.size(); ++idx) {
      if (target.inputs[idx].name == name) return static_cast<int>(idx);
    }
    return -1;
  };
  std::vector<std::string> target_names;
  for (const TensorInfo& input : target.inputs) target_names.push_back(input.name);
  std::vector<int> bound(sample.size(), -1);
  std::vector<std::string> how(sample.size());
  for (size_t idx = 0; idx < sample.size(); ++idx) {
    const std::string& name = sample[idx].name;
    int found = -1;
    if (const std::string* mapped = MappedTarget(options, name)) {
      found = index_of(*mapped);
      if (found < 0) {
        return Status::InvalidArgument(
            "--map " + name + "=" + *mapped + ": the target has no input '" + *mapped +
            "' (target inputs: " + JoinComma(target_names, "none") + ")");
      }
      how[idx] = "--map";
    } else if ((found = index_of(name)) >= 0) {
      how[idx] = "";
    } else {
      for (size_t t = 0; t < target.inputs.size(); ++t) {
        if (SameButSuffix(name, target.inputs[t].name)) found = static_cast<int>(t);
      }
      how[idx] = "the ':0' rule";
    }
    if (found >= 0 && !taken[found]) {
      bound[idx] = found;
      taken[found] = true;
    }
  }
  // By position: as many inputs on each side, and the shapes agree.
  if (sample.size() == target.inputs.size()) {
    for (size_t idx = 0; idx < sample.size(); ++idx) {
      if (bound[idx] >= 0 || taken[idx]) continue;
      const bool transpose =
          NhwcFor(options, sample[idx].name) && sample[idx].tensor.shape().rank() == 4;
      if (!Fits(target.inputs[idx], AsTargetTakes(sample[idx].tensor.shape().dims(), transpose))) {
        continue;
      }
      bound[idx] = static_cast<int>(idx);
      taken[idx] = true;
      how[idx] = "position (equal shapes)";
    }
  }
  for (size_t idx = 0; idx < sample.size(); ++idx) {
    const std::string& name = sample[idx].name;
    const std::vector<int64_t>& dims = sample[idx].tensor.shape().dims();
    if (bound[idx] < 0) {
      return Status::FailedPrecondition("the target has no input '" + name +
                                        "' and none binds to it by position (target "
                                        "inputs: " +
                                        JoinComma(target_names, "none") +
                                        "): name the target's with --map " + name + "=TARGET_NAME");
    }
    const TensorInfo& declared = target.inputs[bound[idx]];
    const bool transpose = NhwcFor(options, name) && dims.size() == 4;
    if (!Fits(declared, AsTargetTakes(dims, transpose))) {
      std::string hint;
      if (!transpose && dims.size() == 4 && Fits(declared, Permuted(dims, true))) {
        hint =
            ": the same tensor in NHWC; if the target keeps images in NHWC (onnx2tf, "
            "TensorFlow), give --target-layout nhwc";
      } else if (transpose && Fits(declared, dims)) {
        hint = ": it takes the data set's NCHW as it is; drop --target-layout for it";
      }
      return Status::FailedPrecondition("the target's input '" + declared.name + "' is " +
                                        FormatDims(declared) + ", the data set's '" + name +
                                        "' is " + DimsText(AsTargetTakes(dims, transpose)) +
                                        (transpose ? " (transposed to NHWC)" : "") + hint);
    }
    const std::optional<DType> cast = FloatingCast(sample[idx].tensor.dtype(), declared);
    binding.inputs_.push_back({name, declared.name, transpose, cast});
    if (declared.name != name || transpose || cast) {
      binding.identity_ = false;
      const std::string cast_text =
          cast ? ", cast " + std::string(DTypeName(sample[idx].tensor.dtype())) + " -> " +
                     std::string(DTypeName(*cast)) + " (the target declares " +
                     std::string(DTypeName(*cast)) + ")"
               : "";
      record.notes.push_back("input '" + name + "' -> the target's '" + declared.name + "'" +
                             (how[idx].empty() ? "" : " by " + how[idx]) +
                             (transpose ? ", transposed NCHW -> NHWC" : "") + cast_text);
    }
  }
  return binding;
}

InterfaceBinding InterfaceBinding::OutputsOnly(const InterfaceOptions& options) {
  InterfaceBinding binding;
  binding.options_ = &options;
  return binding;
}

bool InterfaceBinding::names_kept() const {
  for (const InputBinding& input : inputs_) {
    if (input.source != input.target || input.transpose) return false;
  }
  return true;
}

Result<TensorMap> InterfaceBinding::TargetInputs(const TensorMap& sample) const {
  TensorMap out;
  for (const InputBinding& input : inputs_) {
    const Tensor* tensor = sample.Find(input.source);
    if (tensor == nullptr) {
      return Status::FailedPrecondition("the sample has no input '" + input.source + "'");
    }
    Tensor taken;
    if (input.transpose) {
      CONVGATE_ASSIGN_OR_RETURN(taken, TransposeLayout(*tensor, true));
    } else if (!input.cast) {
      taken = tensor->Clone();
    }
    if (input.cast) {
      CONVGATE_ASSIGN_OR_RETURN(taken,
                                CastFloating(input.transpose ? taken : *tensor, *input.cast));
    }
    out.Append(input.target, std::move(taken));
  }
  return out;
}

void InterfaceBinding::ToSourceNames(TensorMap& target, const TensorMap& source, SideRecord& record,
                                     bool first_sample) {
  if (!output_names_) {
    std::vector<std::pair<std::string, std::string>> names;  // target -> source
    std::vector<bool> source_taken(source.size(), false);
    std::vector<bool> target_taken(target.size(), false);
    std::vector<std::string> how(target.size());
    const auto source_index = [&](const std::string& name) -> int {
      for (size_t idx = 0; idx < source.size(); ++idx) {
        if (source[idx].name == name) return static_cast<int>(idx);
      }
      return -1;
    };
    std::vector<int> bound(target.size(), -1);
    for (size_t idx = 0; idx < target.size(); ++idx) {
      const std::string& name = target[idx].name;
      int found = -1;
      for (const auto& [from, to] : options_->map) {
        if (to != name) continue;
        found = source_index(from);
        how[idx] = "--map";
      }
      if (found < 0 && (found = source_index(name)) >= 0) how[idx] = "";
      if (found < 0) {
        for (size_t s = 0; s < source.size(); ++s) {
          if (SameButSuffix(name, source[s].name)) found = static_cast<int>(s);
        }
        how[idx] = "the ':0' rule";
      }
      if (found >= 0 && !source_taken[found]) {
        bound[idx] = found;
        source_taken[found] = true;
        target_taken[idx] = true;
      }
    }
    if (source.size() == target.size()) {
      for (size_t idx = 0; idx < target.size(); ++idx) {
        if (target_taken[idx] || source_taken[idx]) continue;
        const std::vector<int64_t>& dims = target[idx].tensor.shape().dims();
        const std::vector<int64_t>& wanted = source[idx].tensor.shape().dims();
        const bool nhwc = NhwcFor(*options_, source[idx].name) && dims.size() == 4;
        const bool fits = dims == wanted || (nhwc && Permuted(dims, false) == wanted);
        if (!fits) continue;
        bound[idx] = static_cast<int>(idx);
        source_taken[idx] = target_taken[idx] = true;
        how[idx] = "position (equal shapes)";
      }
    }
    for (size_t idx = 0; idx < target.size(); ++idx) {
      const std::string& name = target[idx].name;
      if (bound[idx] < 0) {
        names.emplace_back(name, name);
        continue;
      }
      const std::string& source_name = source[bound[idx]].name;
      names.emplace_back(name, source_name);
      const std::vector<int64_t>& dims = target[idx].tensor.shape().dims();
      const bool transpose = NhwcFor(*options_, source_name) && dims.size() == 4 &&
                             Permuted(dims, false) == source[bound[idx]].tensor.shape().dims();
      if (transpose) transposed_outputs_.push_back(name);
      if (name != source_name || transpose) {
        record.output_renames.push_back(name + " -> " + source_name +
                                        (transpose ? " (NHWC -> NCHW)" : ""));
        record.notes.push_back("output '" + name + "' -> the source's '" + source_name + "'" +
                               (how[idx].empty() ? "" : " by " + how[idx]) +
                               (transpose ? ", transposed NHWC -> NCHW" : ""));
      }
    }
    if (first_sample && !record.output_renames.empty()) record.output_matching = "map";
    output_names_ = std::move(names);
  }
  bool changes = !transposed_outputs_.empty();
  for (const auto& [from, to] : *output_names_) changes = changes || from != to;
  if (!changes) return;
  TensorMap renamed;
  for (auto& entry : target) {
    std::string name = entry.name;
    for (const auto& [from, to] : *output_names_) {
      if (from == entry.name) name = to;
    }
    const bool transpose = std::find(transposed_outputs_.begin(), transposed_outputs_.end(),
                                     entry.name) != transposed_outputs_.end();
    Result<Tensor> back =
        transpose ? TransposeLayout(entry.tensor, false) : Result<Tensor>(std::move(entry.tensor));
    if (!back.ok() || renamed.Contains(name)) {
      renamed.InsertOrAssign(entry.name,
                             transpose ? entry.tensor.Clone() : std::move(entry.tensor));
      continue;
    }
    renamed.Append(name, std::move(back).value());
  }
  target = std::move(renamed);
}

void InterfaceBinding::Select(TensorMap& outputs) const {
  if (options_ == nullptr || (options_->outputs.empty() && options_->exclude_outputs.empty())) {
    return;
  }
  TensorMap kept;
  for (auto& entry : outputs) {
    const auto listed = [&](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), entry.name) != names.end();
    };
    if (!options_->outputs.empty() && !listed(options_->outputs)) continue;
    if (listed(options_->exclude_outputs)) continue;
    kept.Append(entry.name, std::move(entry.tensor));
  }
  outputs = std::move(kept);
}

Status InterfaceBinding::CheckOutputNames(const std::vector<std::string>& source,
                                          const std::vector<std::string>& target) const {
  if (options_ == nullptr || source.empty()) return Status::OK();
  const auto known = [&](const std::string& name) {
    return std::find(source.begin(), source.end(), name) != source.end();
  };
  for (const auto& [flag, names] : {std::pair{"--outputs", &options_->outputs},
                                    std::pair{"--exclude-outputs", &options_->exclude_outputs}}) {
    for (const std::string& name : *names) {
      if (known(name)) continue;
      return Status::InvalidArgument(
          std::string(flag) + " names '" + name +
          "', which the source does not have (source outputs: " + JoinComma(source, "none") + ")");
    }
  }
  (void)target;
  return Status::OK();
}

}  // namespace convgate::session
