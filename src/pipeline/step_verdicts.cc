// The per-node sentence of the report: which steps pass and which fail, as runs of steps.
#include "pipeline/engine.h"

namespace convgate::pipeline::internal {
namespace {

std::string Run(int first, int last, bool failed) {
  if (first == last) return "step " + std::to_string(first) + (failed ? " fails" : " passes");
  return "steps " + std::to_string(first) + ".." + std::to_string(last) +
         (failed ? " fail" : " pass");
}

}  // namespace

StepVerdicts DescribeSteps(const std::vector<bool>& failed_by_step) {
  StepVerdicts verdicts;
  verdicts.steps = static_cast<int>(failed_by_step.size());
  for (int step = 0; step < verdicts.steps; ++step) {
    if (failed_by_step[step]) verdicts.failed.push_back(step);
  }
  if (verdicts.failed.empty() || static_cast<int>(verdicts.failed.size()) == verdicts.steps) {
    const bool all_failed = !verdicts.failed.empty();
    verdicts.sentence = verdicts.steps == 1 ? Run(0, 0, all_failed)
                                            : "all " + std::to_string(verdicts.steps) + " steps " +
                                                  (all_failed ? "fail" : "pass");
    return verdicts;
  }
  int first = 0;
  for (int step = 1; step <= verdicts.steps; ++step) {
    if (step < verdicts.steps && failed_by_step[step] == failed_by_step[first]) continue;
    verdicts.sentence +=
        (verdicts.sentence.empty() ? "" : ", ") + Run(first, step - 1, failed_by_step[first]);
    first = step;
  }
  // Right at step 0 and wrong from some step to the end: a node validated on its first call only
  // would have passed (LEAPP's reason to replay cached re-entry examples). A failure that comes
  // and goes follows the data, not the re-entry, and is not called that.
  const int first_failed = verdicts.failed.front();
  const bool tail = static_cast<int>(verdicts.failed.size()) == verdicts.steps - first_failed;
  if (!failed_by_step[0] && tail) {
    verdicts.sentence += ": the export does not generalize across re-entry";
  }
  return verdicts;
}

}  // namespace convgate::pipeline::internal
