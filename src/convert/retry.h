// When a failed conversion is worth retrying, and how long to wait (internal to src/convert).
//
// The rule (also in docs/guide.md): a failure looks transient when the converter
//   - timed out, hung (no CPU progress for ConverterStallSeconds(): a deadlock), or was killed by
//     a signal it did not raise itself (the OOM killer, a shutdown);
//   - exited with 75 (EX_TEMPFAIL, sysexits.h: "temporary failure; user is invited to retry");
//   - exited non-zero and its stderr mentions "temporarily", "temporary failure", "try again",
//     "connection" or "timed out" (case-insensitive): converters that download weights or talk
//     to a license server fail that way and recover.
// Anything else (a plain non-zero exit, no output, an invalid output, a missing converter, a bad
// request) fails the same way again, so it is reported at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "convert/converter.h"
#include "convgate/core/subprocess.h"

namespace convgate::convert {

// EX_TEMPFAIL from sysexits.h.
inline constexpr int kExitTempFail = 75;

bool IsTransientFailure(const SubprocessResult& run);

// The name of the variable setting ConverterStallSeconds.
inline constexpr char kStallSecondsEnv[] = "CONVGATE_CONVERTER_STALL_SECONDS";
// Seconds without CPU progress after which a converter process (its whole process group) is hung
// (SubprocessOptions::stall_seconds): $CONVGATE_CONVERTER_STALL_SECONDS, default 120; 0 turns
// the watch off. An export doing work always burns CPU; 120 s of none is a deadlock (an
// optimum-cli export of t5 sat in a futex wait until the 600 s timeout). A value that is not a
// duration (core/units.h: "90", "2m") is InvalidArgument naming the variable; every conversion
// checks it before it starts (convert.cc CheckRequest); StallSecondsOrDefault is for the calls
// after that check.
Result<double> ConverterStallSeconds();
inline constexpr double kDefaultStallSeconds = 120.0;
double StallSecondsOrDefault();

// An attempt's result from how a converter process ended: kNone when it exited 0; kTimedOut;
// kFailed otherwise, a hang too (with `transient` from the rule above). The log tail is the last
// lines of stderr (stdout when stderr is empty).
AttemptResult AttemptFromProcess(const SubprocessResult& run);

// Runs one of convgate's conversion scripts (runtime/torch_export.py, runtime/openvino_export.py)
// under `timeout_seconds`: kConverterMissing when it cannot start, else AttemptFromProcess, with
// the scripts' usage exit (2, argparse's) as kBadRequest, which no retry fixes. `process`, when
// given, gets how the process ended.
AttemptResult RunConversionScript(const std::vector<std::string>& argv, double timeout_seconds,
                                  SubprocessResult* process = nullptr);

// Seconds to wait before retry number `retry` (1-based): base * 2^(retry-1), at most 60 s.
double BackoffSeconds(double base_seconds, int retry);

}  // namespace convgate::convert
