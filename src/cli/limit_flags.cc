// The limits group: how large a tensor a file may hold, how many bytes of tensors a run may hold,
// and how long one model run may take (core/limits.h).
#include "cli/flag_groups.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

// A size flag of the limits group: a positive size (a limit of 0 bytes would refuse everything).
Flag SizeLimitFlag(std::string name, std::string help, std::vector<std::string> examples,
                   int64_t& target) {
  return Flag{.name = std::move(name),
              .value_name = "SIZE",
              .help = std::move(help),
              .default_text = "half of usable memory, " + FormatBytes(target) + " here",
              .examples = std::move(examples),
              .apply = [&target](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(target, ParseByteSize(value));
                if (target > 0) return Status::OK();
                return Status::InvalidArgument("a limit of 0 bytes would refuse every tensor");
              }};
}

}  // namespace

void AddLimitFlags(FlagSet& flags, Limits& limits, LimitUse use) {
  flags.SetGroup("Limits");
  flags.Add(SizeLimitFlag(
      "--max-tensor-bytes",
      "Largest tensor a file may hold (.npy, .npz member, .pb, an exec runner's outputs.npz), "
      "checked from the file's headers before anything is read or inflated",
      {"1GiB", "512MiB"}, limits.max_tensor_bytes));
  flags.Add(SizeLimitFlag(
      "--max-run-bytes",
      use == LimitUse::kFiles
          ? "Most bytes of tensors held at once: an .npz whose members declare more in all is "
            "refused before any is inflated"
          : "Most bytes of tensors a run may hold: the inputs of every sample and one sample's "
            "outputs (where their shapes are known); a run needing more is refused before any "
            "input is generated or model run",
      {"8GiB", "1.5G"}, limits.max_run_bytes));
  if (use == LimitUse::kFiles) return;
  flags.Add(DurationFlag(
      "--run-timeout",
      "How long one model run (one sample) may take before it is stopped (0: no limit). ONNX "
      "Runtime and OpenVINO runs: libtorch and OpenCV cannot be interrupted in-process (exec runs "
      "have --exec-timeout)",
      {"120", "10m", "0"}, limits.run_timeout_seconds));
}

}  // namespace convgate::cli
