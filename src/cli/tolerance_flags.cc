// The tolerance group: the policy file, then each knob globally or per output on top of it.
#include <cstdio>

#include "cli/flag_groups.h"
#include "convgate/compare/noise_floor.h"
#include "convgate/compare/policy_file.h"
#include "convgate/core/numbers.h"

namespace convgate::cli {
namespace {

// A per-output knob: "VALUE" or "NAME:VALUE", parsed and stored by compare's Add* function.
Flag PolicyKnob(std::string name, std::string value_name, std::string help,
                std::string default_text, std::vector<std::string> examples,
                Status (*add)(std::string_view, compare::Policy&), compare::Policy& policy) {
  return Flag{.name = std::move(name),
              .value_name = std::move(value_name),
              .help = std::move(help),
              .default_text = std::move(default_text),
              .examples = std::move(examples),
              .arity = FlagArity::kPerName,
              .apply = [add, &policy](const std::string& value) { return add(value, policy); }};
}

// "per dtype, 1e-05 for float32": the built-in default, read from compare's table.
std::string DTypeDefaultText(double compare::Tolerance::*knob) {
  const compare::DTypeDefault& float32 = compare::BuiltInDTypeDefault(DType::kFloat32);
  return "per dtype, " + FormatSignificant(float32.tolerance.*knob) + " for float32";
}

}  // namespace

void AddToleranceFlags(FlagSet& flags, compare::Policy& policy) {
  flags.SetGroup("Tolerances");
  // Declared first, so it is applied first and the flags below override what it sets.
  flags.Add(Flag{.name = "--policy",
                 .value_name = "FILE.yaml",
                 .help = "Policy file with any of the knobs below, per-output values and "
                         "per-dtype defaults; the flags override it",
                 .examples = {"examples/policies/fp16-network.yaml"},
                 .apply = [&policy](const std::string& value) -> Status {
                   CONVGATE_ASSIGN_OR_RETURN(policy, compare::ReadPolicyFile(value));
                   return Status::OK();
                 }});
  flags.Add({
      PolicyKnob("--atol", "X|NAME:X", "Absolute tolerance, or for one output",
                 DTypeDefaultText(&compare::Tolerance::atol),
                 {"1e-4", "logits:1e-3", "input:0:1e-4"}, compare::AddAtol, policy),
      PolicyKnob("--rtol", "X|NAME:X",
                 "Relative tolerance, or for one output; an element passes when |target - "
                 "source| <= atol + rtol * |source|",
                 DTypeDefaultText(&compare::Tolerance::rtol), {"1e-2", "logits:1e-3"},
                 compare::AddRtol, policy),
      PolicyKnob("--check-error-stat", "STAT|NAME:STAT",
                 "Statistic held to the tolerance: elementwise (Polygraphy's elemwise), max, "
                 "mean, median or pNN; a statistic passes when S(|diff|) <= atol or S(rel) <= "
                 "rtol (Polygraphy's rule)",
                 compare::ErrorStatName(compare::OutputPolicy{}.check_error_stat),
                 {"p99", "p99.5", "elemwise", "logits:max"}, compare::AddCheckErrorStat, policy),
      PolicyKnob("--mismatch-ppm", "N|NAME:N",
                 "Elements allowed outside the tolerance, per million", "0", {"100", "logits:10"},
                 compare::AddMismatchPpm, policy),
      PolicyKnob("--min-cosine", "X|NAME:X", "Minimum cosine similarity of target and source",
                 "none", {"0.999", "logits:0.9999"}, compare::AddMinCosine, policy),
      PolicyKnob("--min-snr-db", "X|NAME:X", "Minimum signal-to-noise ratio in dB", "none",
                 {"40", "logits:30"}, compare::AddMinSnrDb, policy),
  });
  flags.Add(SwitchFlag("--strict-dtype",
                       "Fail an output whose floating-point width changed (float32 -> float16); "
                       "without it such an output is compared by value under the lower "
                       "precision's tolerance and the change is noted",
                       policy.strict_dtype));
}

void AddCalibrationFlags(FlagSet& flags, gate::CompareOptions::Calibration& options,
                         CalibrationUse use) {
  flags.SetGroup("Tolerances");
  const std::string what =
      "run the source once more under a benign change (ONNX Runtime optimization disabled, one "
      "thread) and raise each atol nobody set to " +
      FormatShortest(compare::kNoiseFloorFactor) + " x the measured noise floor";
  if (use == CalibrationUse::kOptIn) {
    flags.Add(SwitchFlag("--calibrate", "Measure the noise floor: " + what, options.enabled));
  } else {
    options.enabled = true;
    flags.Add(Flag{.name = "--no-calibrate",
                   .help = "Do not measure the noise floor (measured by default: " + what + ")",
                   .arity = FlagArity::kSwitch,
                   .apply = [&options](const std::string&) {
                     options.enabled = false;
                     return Status::OK();
                   }});
  }
  flags.Add(Flag{.name = "--no-calibration-cache",
                 .help = "Measure the noise floor again instead of reading the floors an earlier "
                         "run measured on the same model and inputs (kept under "
                         "CONVGATE_CACHE_DIR/calibration)",
                 .arity = FlagArity::kSwitch,
                 .apply = [&options](const std::string&) {
                   options.use_cache = false;
                   return Status::OK();
                 }});
}

}  // namespace convgate::cli
