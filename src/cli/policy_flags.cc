// The tolerance policy's flags, shared by `compare` and `check` (declared in flags.h).
#include "convgate/compare/policy_file.h"
#include "flags.h"

namespace convgate::cli {

void AddToleranceFlags(CLI::App& app, ToleranceFlags& flags) {
  app.add_option("--atol", flags.atol,
                 "Absolute tolerance, or NAME:VALUE for one output (default: per dtype, 1e-5 for "
                 "float32)");
  app.add_option("--rtol", flags.rtol,
                 "Relative tolerance, or NAME:VALUE for one output (default: per dtype, 1e-3 for "
                 "float32); an element passes when |target - source| <= atol + rtol * |source|");
  app.add_option("--check-error-stat", flags.check_error_stat,
                 "Statistic held to the tolerance: elementwise (default), max, mean, median or pNN "
                 "(p99, p99.5), or NAME:STAT; a statistic passes when S(|diff|) <= atol or "
                 "S(rel) <= rtol (Polygraphy's rule)");
  app.add_option("--mismatch-ppm", flags.mismatch_ppm,
                 "Elements allowed outside the tolerance, per million (default 0), or NAME:N");
  app.add_option("--min-cosine", flags.min_cosine,
                 "Minimum cosine similarity of target and source, or NAME:X (default: none)");
  app.add_option("--min-snr-db", flags.min_snr_db,
                 "Minimum signal-to-noise ratio in dB, or NAME:X (default: none)");
  app.add_option("--policy", flags.policy_file,
                 "Policy file (YAML) with any of the above, per-output values and per-dtype "
                 "defaults; flags override it");
}

Result<compare::Policy> ToPolicy(const ToleranceFlags& flags) {
  compare::Policy policy;
  if (!flags.policy_file.empty()) {
    CONVGATE_ASSIGN_OR_RETURN(policy, compare::ReadPolicyFile(flags.policy_file));
  }
  struct FlagValues {
    const char* flag;
    const std::vector<std::string>* values;
    Status (*add)(std::string_view, compare::Policy&);
  };
  const FlagValues table[] = {
      {"--atol", &flags.atol, compare::AddAtol},
      {"--rtol", &flags.rtol, compare::AddRtol},
      {"--check-error-stat", &flags.check_error_stat, compare::AddCheckErrorStat},
      {"--mismatch-ppm", &flags.mismatch_ppm, compare::AddMismatchPpm},
      {"--min-cosine", &flags.min_cosine, compare::AddMinCosine},
      {"--min-snr-db", &flags.min_snr_db, compare::AddMinSnrDb},
  };
  for (const FlagValues& entry : table) {
    for (const std::string& text : *entry.values) {
      CONVGATE_RETURN_IF_ERROR(entry.add(text, policy).WithContext(entry.flag));
    }
  }
  return policy;
}

}  // namespace convgate::cli
