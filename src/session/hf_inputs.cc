#include "convgate/session/hf_inputs.h"

#include "convgate/backends/hf_inputs.h"
#include "convgate/core/temp_dir.h"

namespace convgate::session {
namespace {

// The user shaped generated inputs: the generic generator does exactly that.
bool AsksForGeneric(const inputs::InputOptions& generate) {
  const inputs::InputOptions defaults;
  return generate.range.has_value() || !generate.range_per_input.empty() ||
         !generate.fill_per_input.empty() || !generate.shape_per_input.empty() ||
         !generate.dim_per_symbol.empty() || generate.fill != defaults.fill;
}

}  // namespace

Result<std::optional<inputs::Dataset>> HfModelInputs(const SideRecord& side,
                                                     const DataOptions& data) {
  if (side.backend != "hf" || data.inputs_given()) return std::optional<inputs::Dataset>();
  if (AsksForGeneric(data.generate)) {
    if (!data.prompt.empty()) {
      return Status::InvalidArgument(
          "--prompt has no effect with --fill, --val-range, --shape or --dim: those generate "
          "the inputs as they say; drop one of the two");
    }
    return std::optional<inputs::Dataset>();
  }
  CONVGATE_ASSIGN_OR_RETURN(TempDir temp, TempDir::Create("hf-inputs"));
  backends::HfInputsRequest request;
  request.folder = side.path;
  request.prompt = data.prompt;
  request.seed = data.generate.seed;
  request.samples = data.generate.samples;
  request.out = temp.path() / "inputs.npz";
  Result<std::string> made = backends::MakeHfInputs(request);
  if (!made.ok()) return made.status().WithContext("inputs for " + side.path);
  CONVGATE_ASSIGN_OR_RETURN(inputs::Dataset dataset,
                            inputs::LoadDataset(request.out, Signature{}, data.limits));
  dataset.origin = "made for the model's task by hf_runner.py inputs (seed " +
                   std::to_string(request.seed) + "): " + *made;
  return std::optional<inputs::Dataset>(std::move(dataset));
}

}  // namespace convgate::session
