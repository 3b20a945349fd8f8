// The pipeline group: steps, --set values, and (pipeline) --to and --describe, or (compare)
// --feedback.
#include "cli/flag_groups.h"
#include "convgate/convert/kinds.h"

namespace convgate::cli {
namespace {

// Generated inputs are one sample per step: --samples N is --steps N, and both together are one
// number given twice.
Status RefuseSamplesWithSteps(const FlagSet& flags) {
  if (flags.Given("--samples") && flags.Given("--steps")) {
    return Status::InvalidArgument("--samples: a pipeline runs one sample per step; give --steps");
  }
  return Status::OK();
}

Flag SetFlag(pipeline::PipelineOptions& options) {
  return Flag{.name = "--set",
              .value_name = "NODE.INPUT=FILE",
              .help =
                  "The value of a node input at every step, or a feedback input's initial "
                  "value: an .npy, or an .npz / .safetensors holding one tensor or one named "
                  "INPUT",
              .examples = {"rnn.h=h0.npy", "model.state=state.npz"},
              .arity = FlagArity::kRepeated,
              .apply = [&options](const std::string& value) -> Status {
                const size_t eq = value.find('=');
                if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
                  return Status::InvalidArgument("'" + value + "' is not NODE.INPUT=FILE");
                }
                options.set_values.emplace_back(value.substr(0, eq), value.substr(eq + 1));
                return Status::OK();
              }};
}

Flag ToFlag(pipeline::PipelineOptions& options) {
  return Flag{.name = "--to",
              .value_name = "KIND",
              .help =
                  "Convert every node that has no `target:` with this conversion (through "
                  "the conversion cache) and validate the converted nodes",
              .examples = {"fp16", "opset:17", "ort-optimized:basic"},
              .apply = [&options](const std::string& value) -> Status {
                convert::ConversionRequest request;
                request.kind = value;
                CONVGATE_RETURN_IF_ERROR(convert::CheckConversionRequest(request));
                options.conversion = std::move(request);
                return Status::OK();
              }};
}

}  // namespace

void AddPipelineFlags(FlagSet& flags, pipeline::PipelineOptions& options, PipelineUse use,
                      std::vector<std::string>* feedback) {
  flags.SetGroup("Pipeline");
  Flag steps =
      IntegerFlag("--steps", "N", "Steps to run (feedback values carry from one step to the next)",
                  {"20"}, 1, 1000000, options.steps);
  steps.default_text = "1, or one per sample of --load-inputs";
  flags.Add(std::move(steps));
  flags.Add(SetFlag(options));
  if (use == PipelineUse::kSpec) {
    flags.Add(ToFlag(options));
    flags.Add(SwitchFlag("--describe",
                         "Load every model and check the wiring, then print the pipeline's "
                         "inputs, outputs, feedback inputs and node order; run nothing",
                         options.describe));
  } else {
    flags.Add(Flag{.name = "--feedback",
                   .value_name = "OUT=IN",
                   .help = "Run both models as a loop: output OUT becomes input IN at the next "
                           "step (zeros at step 0), and every step is compared",
                   .examples = {"h_out=h", "state_out=state"},
                   .arity = FlagArity::kRepeated,
                   .apply = [feedback](const std::string& value) -> Status {
                     CONVGATE_RETURN_IF_ERROR(pipeline::ParseFeedbackPair(value).status());
                     feedback->push_back(value);
                     return Status::OK();
                   }});
    flags.AddCheck([feedback](const FlagSet& given) -> Status {
      if (feedback->empty() && (given.Given("--steps") || given.Given("--set"))) {
        return Status::InvalidArgument("--steps and --set need --feedback");
      }
      return feedback->empty() ? Status::OK() : RefuseSamplesWithSteps(given);
    });
    return;
  }
  flags.AddCheck(RefuseSamplesWithSteps);
}

}  // namespace convgate::cli
