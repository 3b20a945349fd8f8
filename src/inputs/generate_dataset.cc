// GenerateDataset: resolve each input's shape, dtype, fill and range from the signature and the
// options (all checks happen before any value is drawn), then draw the values.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convgate/core/numbers.h"
#include "convgate/inputs/dataset.h"
#include "convgate/inputs/prng.h"
#include "inputs/dim_expression.h"
#include "inputs/fill.h"

namespace convgate::inputs {
namespace {

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

std::string InputList(const Signature& signature) {
  std::vector<std::string> names;
  for (const TensorInfo& info : signature.inputs) names.push_back(info.name);
  return names.empty() ? "the model has no inputs" : "its inputs are: " + Join(names);
}

template <typename Value>
Status CheckNamesIn(const std::map<std::string, Value>& per_input, std::string_view flag,
                    const Signature& signature) {
  for (const auto& [name, value] : per_input) {
    if (signature.FindInput(name) != nullptr) continue;
    return Status::InvalidArgument(std::string(flag) + " names input '" + name +
                                   "', which the model does not have; " + InputList(signature));
  }
  return Status::OK();
}

// A --dim for a symbol no input declares is a typo, not a harmless extra.
Status CheckDimSymbols(const Signature& signature, const InputOptions& options) {
  std::set<std::string> symbols;
  for (const TensorInfo& info : signature.inputs) {
    for (const Dim& dim : info.shape) {
      if (dim.is_fixed() || dim.symbol.empty()) continue;
      symbols.insert(dim.symbol);
      // The parts of "past_sequence_length + sequence_length" can be bound on their own.
      if (auto parts = internal::ExpressionParts(dim.symbol))
        symbols.insert(parts->begin(), parts->end());
    }
  }
  for (const auto& [symbol, value] : options.dim_per_symbol) {
    if (symbols.count(symbol) != 0) continue;
    const std::string known =
        symbols.empty() ? "the model's inputs have no symbolic dims"
                        : "the model's symbolic dims are: " +
                              Join(std::vector<std::string>(symbols.begin(), symbols.end()));
    return Status::InvalidArgument("--dim names symbol '" + symbol + "', which no input uses; " +
                                   known);
  }
  return Status::OK();
}

Status CheckOptions(const Signature& signature, const InputOptions& options) {
  if (options.samples < 1) {
    return Status::InvalidArgument("--samples must be at least 1, got " +
                                   std::to_string(options.samples));
  }
  CONVGATE_RETURN_IF_ERROR(CheckInputNames(signature, options));
  return CheckDimSymbols(signature, options);
}

// A symbol's value and the argument that set it, for conflict messages.
struct Binding {
  int64_t value;
  std::string source;
};
using Bindings = std::map<std::string, Binding>;

// A --shape must agree with the declaration's rank and fixed dims. Its values for symbolic dims
// bind those symbols for the other inputs too, so that generated inputs are consistent with each
// other (ValidateDataset would reject a sample where 'batch' is 2 in one input and 1 in another).
Status ApplyShapeOverride(const TensorInfo& info, const Shape& shape, Bindings& bindings) {
  if (!info.has_shape) return Status::OK();
  std::string source = "--shape " + info.name + ":";
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    source += (axis == 0 ? "" : "x") + std::to_string(shape.dim(axis));
  }
  bool matches = shape.rank() == info.shape.size();
  for (size_t axis = 0; matches && axis < shape.rank(); ++axis) {
    const Dim& dim = info.shape[axis];
    matches = !dim.is_fixed() || dim.value == shape.dim(axis);
  }
  if (!matches) {
    return Status::InvalidArgument("--shape for input '" + info.name + "' is " + shape.ToString() +
                                   " but the model declares " + FormatDims(info));
  }
  for (size_t axis = 0; axis < shape.rank(); ++axis) {
    const Dim& dim = info.shape[axis];
    if (dim.is_fixed() || dim.symbol.empty()) continue;
    auto [it, inserted] = bindings.try_emplace(dim.symbol, Binding{shape.dim(axis), source});
    if (inserted || it->second.value == shape.dim(axis)) continue;
    return Status::InvalidArgument(source + " sets dim '" + dim.symbol + "' to " +
                                   std::to_string(shape.dim(axis)) + ", but " + it->second.source +
                                   " sets it to " + std::to_string(it->second.value));
  }
  return Status::OK();
}

// A dim whose symbol is an expression of other symbols ("past_sequence_length +
// sequence_length"), evaluated from its parts' bindings (unbound parts take 1, noted as any
// unbound symbol is), so that the inputs agree with each other; nullopt for a plain symbol.
std::optional<int64_t> DerivedDim(const std::string& symbol, const std::string& where,
                                  const Bindings& bindings, std::set<std::string>& noted_symbols,
                                  std::vector<std::string>& notes, bool& bound_by_flags) {
  if (!internal::ExpressionParts(symbol)) return std::nullopt;
  std::string parts;
  const auto value_of = [&](const std::string& part) -> int64_t {
    int64_t value = 1;
    if (auto it = bindings.find(part); it != bindings.end()) {
      value = it->second.value;
      bound_by_flags = true;
    } else if (noted_symbols.insert(part).second) {
      notes.push_back("dim '" + part + "' (in " + where + ", '" + symbol +
                      "') unbound: used 1; bind it with --dim " + part + "=N");
    }
    parts += (parts.empty() ? "" : ", ") + part + " " + std::to_string(value);
    return value;
  };
  std::optional<int64_t> value = internal::EvaluateDimExpression(symbol, value_of);
  if (value && noted_symbols.insert(symbol).second) {
    notes.push_back(where + " ('" + symbol +
                    "') derived from its parts: " + std::to_string(*value) + " (" + parts + ")");
  }
  return value;
}

// Declared dims with symbols bound; unbound and unknown dims become 1 and are noted (once per
// symbol, so a 'batch' shared by ten inputs gives one note).
Result<Shape> DeclaredShape(const TensorInfo& info, const Bindings& bindings,
                            std::set<std::string>& noted_symbols, std::vector<std::string>& notes) {
  if (!info.has_shape) {
    return Status::InvalidArgument("input '" + info.name +
                                   "' declares no shape; give one with --shape " + info.name +
                                   ":DIMS");
  }
  std::vector<int64_t> dims;
  bool bound_by_flags = false;
  for (size_t axis = 0; axis < info.shape.size(); ++axis) {
    const Dim& dim = info.shape[axis];
    const std::string where = "input '" + info.name + "' dim " + std::to_string(axis);
    if (dim.is_fixed()) {
      dims.push_back(dim.value);
    } else if (dim.symbol.empty() && axis == 1 && info.hint.channels > 0) {
      dims.push_back(info.hint.channels);
      notes.push_back(where + " unknown: used " + std::to_string(info.hint.channels) +
                      ", the channels " + info.hint.channels_source + " takes");
    } else if (dim.symbol.empty()) {
      dims.push_back(1);
      notes.push_back(where + " unknown: used 1; set the shape with --shape " + info.name +
                      ":DIMS");
    } else if (auto it = bindings.find(dim.symbol); it != bindings.end()) {
      dims.push_back(it->second.value);
      bound_by_flags = true;
    } else if (std::optional<int64_t> derived =
                   DerivedDim(dim.symbol, where, bindings, noted_symbols, notes, bound_by_flags)) {
      dims.push_back(*derived);
    } else {
      dims.push_back(1);
      if (noted_symbols.insert(dim.symbol).second) {
        notes.push_back(where + " ('" + dim.symbol + "') unbound: used 1; bind it with --dim " +
                        dim.symbol + "=N");
      }
    }
  }
  Result<Shape> shape = Shape::Make(std::move(dims));
  if (shape.ok()) return shape;
  // Too many elements: a usage error when a --dim or --shape value bound one of the dims; the
  // model's own dims alone describe an input convgate cannot make (exit 3, not 2).
  const Status error = shape.status().WithContext("input '" + info.name + "'");
  if (bound_by_flags) return error;
  return Status::Unimplemented(error.message() + " as the model declares it: convgate cannot " +
                               "generate it");
}

// Everything needed to draw one input's values.
struct InputPlan {
  const TensorInfo* info;
  DType dtype;
  Shape shape;
  Fill fill;
  ValueRange range;
};

// What the graph shows (core/signature.h InputHint) where no flag says otherwise: token ids
// inside their embedding table, masks of ones.
void ApplyGraphHint(const TensorInfo& info, const InputOptions& options, InputPlan& plan,
                    std::vector<std::string>& notes) {
  if (options.fill_given || plan.fill != Fill::kUniform) return;
  if (info.hint.mask) {
    plan.fill = Fill::kOnes;
    notes.push_back("input '" + info.name + "' is ones: a mask, by its name (--fill " + info.name +
                    ":uniform for random bits)");
  } else if (IsInteger(plan.dtype) && info.hint.index_rows > 1) {
    plan.range = ValueRange{0.0, static_cast<double>(info.hint.index_rows - 1)};
    notes.push_back("input '" + info.name + "' takes values in [0, " +
                    std::to_string(info.hint.index_rows - 1) + "]: it indexes " +
                    info.hint.index_source + " (--val-range " + info.name + ":[LO,HI] to choose)");
  }
}

Result<InputPlan> PlanInput(const TensorInfo& info, const InputOptions& options,
                            const Bindings& bindings, std::set<std::string>& noted_symbols,
                            std::vector<std::string>& notes) {
  if (!info.dtype) {
    return Status::Unimplemented("input '" + info.name + "' has type " + info.type_name +
                                 ", which convgate cannot generate");
  }
  if (*info.dtype == DType::kString) {
    // Random strings would say nothing about a model: text inputs must be real text.
    return Status::Unimplemented("cannot generate values for string input '" + info.name +
                                 "': give them with --load-inputs (an .npz of a numpy str array, "
                                 "or an ONNX test-case folder)");
  }
  InputPlan plan{&info, *info.dtype, Shape(), options.fill, ValueRange()};
  if (auto it = options.shape_per_input.find(info.name); it != options.shape_per_input.end()) {
    plan.shape = it->second;
  } else {
    CONVGATE_ASSIGN_OR_RETURN(plan.shape, DeclaredShape(info, bindings, noted_symbols, notes));
  }
  if (auto it = options.fill_per_input.find(info.name); it != options.fill_per_input.end()) {
    plan.fill = it->second;
  }
  plan.range = options.range.value_or(DefaultValueRange(plan.dtype, plan.fill));
  if (auto it = options.range_per_input.find(info.name); it != options.range_per_input.end()) {
    plan.range = it->second;
  } else if (!options.range && !options.fill_per_input.contains(info.name)) {
    ApplyGraphHint(info, options, plan, notes);
  }
  Status range_ok = CheckFillRange(plan.dtype, plan.fill, plan.range);
  if (!range_ok.ok()) return range_ok.WithContext("input '" + info.name + "'");
  return plan;
}

// A symbolic channel dim the flags left unbound takes the channels the input's first Conv
// takes (ViT's num_channels), instead of 1, which that Conv refuses.
void BindChannels(const Signature& signature, Bindings& bindings, std::vector<std::string>& notes) {
  for (const TensorInfo& info : signature.inputs) {
    if (info.hint.channels <= 0 || info.shape.size() != 4) continue;
    const Dim& dim = info.shape[1];
    if (dim.is_fixed() || dim.symbol.empty() || bindings.contains(dim.symbol)) continue;
    const std::string source = "the graph (" + info.hint.channels_source + ")";
    bindings[dim.symbol] = Binding{info.hint.channels, source};
    notes.push_back("input '" + info.name + "' dim 1 ('" + dim.symbol + "'): used " +
                    std::to_string(info.hint.channels) + ", the channels " +
                    info.hint.channels_source + " takes; bind it with --dim " + dim.symbol + "=N");
  }
}

// Symbolic dims the flags and the graph left unbound take what the export's config.json says
// (graph/config_hints.h), instead of 1.
void BindDimDefaults(const Signature& signature, Bindings& bindings,
                     std::vector<std::string>& notes) {
  for (const TensorInfo& info : signature.inputs) {
    for (const InputHint::DimDefault& hint : info.hint.dim_defaults) {
      if (hint.axis >= info.shape.size()) continue;
      const std::string& symbol = info.shape[hint.axis].symbol;
      if (symbol.empty() || bindings.contains(symbol)) continue;
      bindings[symbol] = Binding{hint.value, hint.source};
      notes.push_back("input '" + info.name + "' dim " + std::to_string(hint.axis) + " ('" +
                      symbol + "'): used " + std::to_string(hint.value) + ", from " + hint.source +
                      "; bind it with --dim " + symbol + "=N");
    }
  }
}

Result<std::vector<InputPlan>> PlanInputs(const Signature& signature, const InputOptions& options,
                                          std::vector<std::string>& notes) {
  Bindings bindings;
  for (const auto& [symbol, value] : options.dim_per_symbol) {
    bindings[symbol] = Binding{value, "--dim " + symbol + "=" + std::to_string(value)};
  }
  for (const TensorInfo& info : signature.inputs) {
    auto it = options.shape_per_input.find(info.name);
    if (it != options.shape_per_input.end()) {
      CONVGATE_RETURN_IF_ERROR(ApplyShapeOverride(info, it->second, bindings));
    }
  }
  BindChannels(signature, bindings, notes);
  BindDimDefaults(signature, bindings, notes);
  std::vector<InputPlan> plans;
  std::set<std::string> noted_symbols;
  for (const TensorInfo& info : signature.inputs) {
    CONVGATE_ASSIGN_OR_RETURN(InputPlan plan,
                              PlanInput(info, options, bindings, noted_symbols, notes));
    plans.push_back(std::move(plan));
  }
  return plans;
}

// "generated: uniform (mask: ones), seed 1, 2 samples".
// How one input was filled, e.g. "image uniform [0, 1)", "ids uniform integers [0, 9]",
// "mask random bits", "x normal mean 0 std 1".
std::string DescribePlan(const InputPlan& plan) {
  const std::string& name = plan.info->name;
  const std::string lo = FormatShortest(plan.range.lo), hi = FormatShortest(plan.range.hi);
  if (plan.fill == Fill::kZeros || plan.fill == Fill::kOnes) {
    return name + " " + std::string(FillName(plan.fill));
  }
  if (plan.dtype == DType::kBool) return name + " random bits";
  if (plan.fill == Fill::kNormal) {
    return name + " normal mean " + FormatShortest((plan.range.lo + plan.range.hi) / 2) + " std " +
           FormatShortest((plan.range.hi - plan.range.lo) / 2);
  }
  if (IsInteger(plan.dtype)) return name + " uniform integers [" + lo + ", " + hi + "]";
  return name + " uniform [" + lo + ", " + hi + ")";
}

// "generated (seed 1, 2 samples): image uniform [0, 1); ids uniform integers [0, 1]".
std::string DescribeGeneration(const InputOptions& options, const std::vector<InputPlan>& plans) {
  std::string text = "generated (seed " + std::to_string(options.seed) + ", " +
                     std::to_string(options.samples) +
                     (options.samples == 1 ? " sample)" : " samples)");
  for (size_t idx = 0; idx < plans.size(); ++idx) {
    text += (idx == 0 ? ": " : "; ") + DescribePlan(plans[idx]);
  }
  return text;
}

}  // namespace

Status CheckInputNames(const Signature& signature, const InputOptions& options) {
  CONVGATE_RETURN_IF_ERROR(CheckNamesIn(options.fill_per_input, "--fill", signature));
  CONVGATE_RETURN_IF_ERROR(CheckNamesIn(options.range_per_input, "--val-range", signature));
  return CheckNamesIn(options.shape_per_input, "--shape", signature);
}

Result<std::vector<PlannedInput>> PlanGeneratedInputs(const Signature& signature,
                                                      const InputOptions& options) {
  CONVGATE_RETURN_IF_ERROR(CheckOptions(signature, options));
  std::vector<std::string> notes;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<InputPlan> plans, PlanInputs(signature, options, notes));
  std::vector<PlannedInput> planned;
  for (const InputPlan& plan : plans) planned.push_back({plan.info->name, plan.dtype, plan.shape});
  return planned;
}

namespace {

// Sample `index` of every input in `plans`: each from its own Prng(DeriveSeed(seed, index, input)),
// so that a sample made alone is the sample GenerateDataset makes.
Result<TensorMap> MakeSample(const std::vector<InputPlan>& plans, uint64_t seed, size_t index) {
  TensorMap sample;
  for (size_t input_idx = 0; input_idx < plans.size(); ++input_idx) {
    const InputPlan& plan = plans[input_idx];
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Allocate(plan.dtype, plan.shape));
    Prng prng(DeriveSeed(seed, static_cast<uint64_t>(index), input_idx));
    FillTensor(tensor, plan.fill, plan.range, prng);
    CONVGATE_RETURN_IF_ERROR(sample.Insert(plan.info->name, std::move(tensor)));
  }
  return sample;
}

}  // namespace

Result<Dataset> GenerateDataset(const Signature& signature, const InputOptions& options) {
  CONVGATE_RETURN_IF_ERROR(CheckOptions(signature, options));
  Dataset dataset;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<InputPlan> plans,
                            PlanInputs(signature, options, dataset.notes));
  dataset.origin = DescribeGeneration(options, plans);
  for (int sample_idx = 0; sample_idx < options.samples; ++sample_idx) {
    CONVGATE_ASSIGN_OR_RETURN(TensorMap sample,
                              MakeSample(plans, options.seed, static_cast<size_t>(sample_idx)));
    dataset.samples.push_back(std::move(sample));
  }
  return dataset;
}

Result<Dataset> GenerateStreamedDataset(const Signature& signature, const InputOptions& options) {
  CONVGATE_RETURN_IF_ERROR(CheckOptions(signature, options));
  // The plans point into the signature: the maker keeps its own copy of both.
  struct State {
    Signature signature;
    std::vector<InputPlan> plans;
  };
  auto state = std::make_shared<State>();
  state->signature = signature;
  Dataset dataset;
  CONVGATE_ASSIGN_OR_RETURN(state->plans, PlanInputs(state->signature, options, dataset.notes));
  dataset.origin = DescribeGeneration(options, state->plans);
  CONVGATE_ASSIGN_OR_RETURN(TensorMap first, MakeSample(state->plans, options.seed, 0));
  dataset.samples.push_back(std::move(first));
  const uint64_t seed = options.seed;
  dataset.streamed = static_cast<size_t>(options.samples);
  dataset.make = [state, seed](size_t index, std::vector<DataFile>&) {
    return MakeSample(state->plans, seed, index);
  };
  return dataset;
}

}  // namespace convgate::inputs
