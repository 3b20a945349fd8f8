#include "convgate/loaders/load_data.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "convgate/core/join.h"
#include "convgate/core/tensor_copy.h"
#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

std::string InputList(const Signature& signature) {
  std::vector<std::string> names;
  for (const TensorInfo& input : signature.inputs) names.push_back(input.name);
  return JoinComma(names, "none");
}

// Whether an input could take `kind` of data, for a spec that names none.
bool Suits(const TensorInfo& input, DataKind kind) {
  const size_t rank = input.has_shape ? input.shape.size() : 0;
  const bool integer = input.dtype && IsInteger(*input.dtype);
  switch (kind) {
    case DataKind::kImage:
      return rank == 3 || rank == 4;
    case DataKind::kTokens:
    case DataKind::kText:
      return integer && !input.hint.mask && (rank == 1 || rank == 2);
    case DataKind::kAudio:
    case DataKind::kTable:
      return !integer && rank >= 1;
  }
  return false;
}

Result<const TensorInfo*> InputFor(const DataSpec& spec, const Signature& signature) {
  const std::string kind(DataKindName(spec.kind));
  if (!spec.input.empty()) {
    for (const TensorInfo& input : signature.inputs) {
      if (input.name == spec.input) return &input;
    }
    return Status::InvalidArgument("--data " + kind + ":" + spec.input +
                                   "=...: the model has no input '" + spec.input +
                                   "' (inputs: " + InputList(signature) + ")");
  }
  if (signature.inputs.size() == 1) return &signature.inputs.front();
  const TensorInfo* found = nullptr;
  for (const TensorInfo& input : signature.inputs) {
    if (!Suits(input, spec.kind)) continue;
    if (found != nullptr) {
      found = nullptr;
      break;
    }
    found = &input;
  }
  if (found == nullptr) {
    return Status::InvalidArgument("--data " + kind + ":" + spec.path +
                                   " names no input, and the model's inputs (" +
                                   InputList(signature) + ") do not say which one takes " + kind +
                                   " data: write --data " + kind + ":NAME=" + spec.path);
  }
  return found;
}

// The shape an input will have and which of its sizes are fixed (declared, or given by --shape
// or --dim): the rest are the data's to choose.
Result<InputPlan> PlanOf(const TensorInfo& input, DataKind kind,
                         const std::vector<inputs::PlannedInput>& planned,
                         const inputs::InputOptions& generate) {
  InputPlan plan;
  plan.info = &input;
  const bool ids = kind == DataKind::kTokens || kind == DataKind::kText;
  plan.dtype = input.dtype.value_or(ids ? DType::kInt64 : DType::kFloat32);
  for (const inputs::PlannedInput& p : planned) {
    if (p.name == input.name) plan.shape = p.shape.dims();
  }
  if (!input.has_shape && generate.shape_per_input.count(input.name) == 0) {
    return Status::InvalidArgument("--data: input '" + input.name +
                                   "' declares no shape: give it with --shape " + input.name +
                                   ":DIMS");
  }
  const bool shape_given = generate.shape_per_input.count(input.name) > 0;
  for (size_t axis = 0; axis < plan.shape.size(); ++axis) {
    const Dim dim = input.has_shape && axis < input.shape.size() ? input.shape[axis] : Dim{};
    plan.fixed.push_back(shape_given || dim.is_fixed() ||
                         (!dim.symbol.empty() && generate.dim_per_symbol.count(dim.symbol) > 0));
  }
  const size_t unbatched_rank = kind == DataKind::kImage ? 3 : 1;
  plan.batched = plan.shape.size() > unbatched_rank;
  return plan;
}

Result<Rows> RowsOf(const DataSpec& spec, const InputPlan& plan, const LoaderOptions& options,
                    const Limits& limits, bool lazy) {
  switch (spec.kind) {
    case DataKind::kImage:
      return LoadImageRows(spec, plan, options.image, limits, lazy);
    case DataKind::kAudio:
      return LoadAudioRows(spec, plan, options.audio, limits);
    case DataKind::kTokens:
      return LoadTokenRows(spec, plan, options.tokens, limits);
    case DataKind::kText:
      return LoadTextRows(spec, plan, options.tokens, limits);
    case DataKind::kTable:
      return LoadTableRows(spec, plan, limits);
  }
  return Status::Internal("unknown data kind");
}

// Row `idx` of `rows`: decoded now when rows are lazy; moved out when `take` (a held dataset uses
// each row once), else copied (a streamed sample may be made twice: run ahead, then for the
// target).
Result<Tensor> RowAt(Rows& rows, size_t idx, bool take, std::vector<inputs::DataFile>& files) {
  if (rows.decode) return rows.decode(idx, files);
  if (take) return std::move(rows.rows[idx]);
  return TryClone(rows.rows[idx]);
}

// `count` rows from `first` as one tensor: their batch dims (of 1) side by side.
Result<Tensor> Stack(Rows& rows, size_t first, size_t count, bool batched, bool take,
                     std::vector<inputs::DataFile>& files) {
  if (!batched) return RowAt(rows, first, take, files);
  Tensor stacked;
  std::byte* out = nullptr;
  for (size_t idx = first; idx < first + count; ++idx) {
    CONVGATE_ASSIGN_OR_RETURN(Tensor row, RowAt(rows, idx, take, files));
    if (idx == first) {
      std::vector<int64_t> dims = row.shape().dims();
      dims[0] = static_cast<int64_t>(count);
      CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
      CONVGATE_ASSIGN_OR_RETURN(stacked, Tensor::Allocate(row.dtype(), shape));
      out = stacked.bytes().data();
    }
    const std::span<const std::byte> bytes = row.bytes();
    std::memcpy(out, bytes.data(), bytes.size());
    out += bytes.size();
  }
  return stacked;
}

// An attention mask beside token ids: 1 for each token, 0 for the padding.
Result<Tensor> MaskFor(const TensorInfo& mask, const Tensor& ids,
                       const std::vector<int64_t>& lengths, size_t first) {
  CONVGATE_ASSIGN_OR_RETURN(Tensor out,
                            Tensor::Allocate(mask.dtype.value_or(DType::kInt64), ids.shape()));
  const std::vector<int64_t>& dims = ids.shape().dims();
  const int64_t length = dims.back();
  const int64_t batch = ids.num_elements() / std::max<int64_t>(length, 1);
  for (int64_t row = 0; row < batch; ++row) {
    for (int64_t i = 0; i < lengths[first + row] && i < length; ++i) {
      out.SetDouble(row * length + i, 1.0);
    }
  }
  return out;
}

struct Fed {
  const TensorInfo* input;
  InputPlan plan;
  Rows rows;
  size_t batch = 1;
};

// What samples are made from: the fed inputs' rows, the masks beside token ids and the inputs
// generated as usual. Its pointers point into its own copy of the signature: a streamed dataset's
// maker outlives the caller's.
struct Feeding {
  Signature signature;
  std::vector<Fed> fed;
  std::vector<const TensorInfo*> masks;
  const Fed* tokens = nullptr;  // the fed input whose rows have lengths
  std::optional<inputs::Dataset> generated;
  bool take = true;  // each sample is made once (held): rows are moved, not copied
};

// Sample `s`: each fed input's rows stacked, masks marked, the rest from the generated dataset,
// in the signature's order.
Result<TensorMap> MakeSample(Feeding& feeding, size_t s, std::vector<inputs::DataFile>& files) {
  std::map<const TensorInfo*, Tensor> tensors;
  for (Fed& f : feeding.fed) {
    CONVGATE_ASSIGN_OR_RETURN(
        Tensor tensor, Stack(f.rows, s * f.batch, f.batch, f.plan.batched, feeding.take, files));
    tensors.emplace(f.input, std::move(tensor));
  }
  for (const TensorInfo* mask : feeding.masks) {
    const Fed& tokens = *feeding.tokens;
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, MaskFor(*mask, tensors.at(tokens.input),
                                                     tokens.rows.lengths, s * tokens.batch));
    tensors.emplace(mask, std::move(tensor));
  }
  TensorMap generated;
  if (feeding.generated) {
    inputs::Dataset& made = *feeding.generated;
    if (s >= made.samples.size()) {
      CONVGATE_ASSIGN_OR_RETURN(generated, made.make(s, files));
    } else if (feeding.take) {
      generated = std::move(made.samples[s]);
    } else {
      CONVGATE_ASSIGN_OR_RETURN(generated, TryClone(made.samples[s]));
    }
  }
  TensorMap sample;
  for (const TensorInfo& input : feeding.signature.inputs) {
    auto found = tensors.find(&input);
    if (found != tensors.end()) {
      sample.Append(input.name, std::move(found->second));
    } else if (Tensor* made = generated.Find(input.name)) {
      sample.Append(input.name, std::move(*made));
    }
  }
  return sample;
}

}  // namespace

Result<inputs::Dataset> LoadData(const LoaderOptions& options, const Signature& caller_signature,
                                 const inputs::InputOptions& generate, const Limits& limits,
                                 bool stream) {
  auto feeding = std::make_shared<Feeding>();
  feeding->signature = caller_signature;
  feeding->take = !stream;
  const Signature& signature = feeding->signature;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<inputs::PlannedInput> planned,
                            inputs::PlanGeneratedInputs(signature, generate));
  std::vector<Fed>& fed = feeding->fed;
  for (const DataSpec& spec : options.specs) {
    CONVGATE_ASSIGN_OR_RETURN(const TensorInfo* input, InputFor(spec, signature));
    for (const Fed& other : fed) {
      if (other.input == input) {
        return Status::InvalidArgument("two --data values feed input '" + input->name +
                                       "': give one per input");
      }
    }
    CONVGATE_ASSIGN_OR_RETURN(InputPlan plan, PlanOf(*input, spec.kind, planned, generate));
    CONVGATE_ASSIGN_OR_RETURN(Rows rows, RowsOf(spec, plan, options, limits, stream));
    const size_t batch = plan.batched && plan.fixed[0] ? static_cast<size_t>(plan.shape[0]) : 1;
    fed.push_back({input, std::move(plan), std::move(rows), std::max<size_t>(batch, 1)});
  }
  inputs::Dataset dataset;
  size_t samples = SIZE_MAX;
  for (const Fed& f : fed) samples = std::min(samples, f.rows.size() / f.batch);
  if (options.max_samples > 0)
    samples = std::min(samples, static_cast<size_t>(options.max_samples));
  for (const Fed& f : fed) {
    if (f.rows.size() < f.batch) {
      return Status::FailedPrecondition("input '" + f.input->name + "' takes a batch of " +
                                        std::to_string(f.batch) + " and --data gave " +
                                        std::to_string(f.rows.size()) + " row(s)");
    }
    dataset.notes.insert(dataset.notes.end(), f.rows.notes.begin(), f.rows.notes.end());
    dataset.files.insert(dataset.files.end(), f.rows.files.begin(), f.rows.files.end());
    const size_t used = samples * f.batch;
    if (used < f.rows.size()) {
      dataset.notes.push_back("input '" + f.input->name +
                              "': " + std::to_string(f.rows.size() - used) + " of " +
                              std::to_string(f.rows.size()) + " row(s) left unused (samples: " +
                              std::to_string(samples) + ", batch " + std::to_string(f.batch) + ")");
    }
  }
  // The inputs no spec feeds: masks beside token ids, else generated as usual, with the symbols
  // they share with fed inputs bound to the fed sizes.
  for (const Fed& f : fed) {
    if (!f.rows.lengths.empty()) feeding->tokens = &f;
  }
  Signature rest;
  inputs::InputOptions rest_options = generate;
  rest_options.samples = static_cast<int>(samples);
  for (const TensorInfo& input : signature.inputs) {
    const bool is_fed =
        std::any_of(fed.begin(), fed.end(), [&](const Fed& f) { return f.input == &input; });
    if (is_fed) {
      rest_options.fill_per_input.erase(input.name);
      rest_options.range_per_input.erase(input.name);
      rest_options.shape_per_input.erase(input.name);
      continue;
    }
    if (feeding->tokens != nullptr && input.hint.mask) {
      feeding->masks.push_back(&input);
      continue;
    }
    rest.inputs.push_back(input);
  }
  std::vector<inputs::DataFile> first_files;
  for (Fed& f : fed) {
    if (!f.input->has_shape || f.rows.size() == 0) continue;
    // The sizes of a fed row: the first row's (lazy rows are all alike).
    Result<Tensor> decoded = Tensor();
    if (f.rows.decode) decoded = f.rows.decode(0, first_files);
    if (!decoded.ok()) return decoded.status();
    const std::vector<int64_t> dims =
        (f.rows.decode ? *decoded : f.rows.rows.front()).shape().dims();
    for (size_t axis = 0; axis < f.input->shape.size() && axis < dims.size(); ++axis) {
      const std::string& symbol = f.input->shape[axis].symbol;
      if (symbol.empty() || rest_options.dim_per_symbol.count(symbol)) continue;
      rest_options.dim_per_symbol[symbol] =
          axis == 0 && f.plan.batched ? static_cast<int64_t>(f.batch) : dims[axis];
    }
  }
  if (!rest.inputs.empty() && samples > 0) {
    // Symbols only fed inputs declare are not the generated inputs' to refuse.
    for (auto it = rest_options.dim_per_symbol.begin(); it != rest_options.dim_per_symbol.end();) {
      bool used = false;
      for (const TensorInfo& input : rest.inputs) {
        for (const Dim& dim : input.shape) used = used || dim.symbol == it->first;
      }
      it = used ? std::next(it) : rest_options.dim_per_symbol.erase(it);
    }
    CONVGATE_ASSIGN_OR_RETURN(feeding->generated,
                              stream ? inputs::GenerateStreamedDataset(rest, rest_options)
                                     : inputs::GenerateDataset(rest, rest_options));
    const inputs::Dataset& generated = *feeding->generated;
    dataset.notes.insert(dataset.notes.end(), generated.notes.begin(), generated.notes.end());
    dataset.notes.push_back("generated the inputs --data does not feed (" + InputList(rest) +
                            "): " + generated.origin);
  }
  // Sample 0 is made now in either case: a file that cannot be decoded says so before any run.
  const size_t made_now = stream ? std::min<size_t>(samples, 1) : samples;
  for (size_t s = 0; s < made_now; ++s) {
    CONVGATE_ASSIGN_OR_RETURN(TensorMap sample, MakeSample(*feeding, s, dataset.files));
    dataset.samples.push_back(std::move(sample));
  }
  if (stream && samples > 0) {
    dataset.streamed = samples;
    dataset.make = [feeding](size_t index, std::vector<inputs::DataFile>& files) {
      return MakeSample(*feeding, index, files);
    };
  }
  for (const TensorInfo* mask : feeding->masks) {
    dataset.notes.push_back("input '" + mask->name + "': the attention mask of '" +
                            feeding->tokens->input->name +
                            "' (1 for each token, 0 for the padding)");
  }
  std::string origin;
  for (const DataSpec& spec : options.specs) {
    origin += (origin.empty() ? "" : ", ") + std::string(DataKindName(spec.kind)) + ":" +
              (spec.input.empty() ? "" : spec.input + "=") + spec.path;
  }
  dataset.origin = "--data " + origin;
  return dataset;
}

}  // namespace convgate::loaders
