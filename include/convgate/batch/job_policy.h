// How `convgate batch` judges a job that did not pass: whether it ran out of its --job-memory
// limit (category "oom"), and whether its failure is transient (worth another attempt).
#pragma once

#include <cstdint>
#include <string>

#include "convgate/store/store.h"

namespace convgate::batch {

// The error category of a job whose convgate exited with `exit_code` (core/exit_code.h): "usage"
// (2), "cannot-run" (3, refined later by the stage report.json names: "convert-failed"),
// "internal" (4), "interrupted" (130, 143), else "unexpected-exit".
std::string ErrorCategoryOfExit(int exit_code);

// A job that ended in error under an address-space limit (`limit_bytes` > 0) because memory ran
// out becomes category "oom", its text naming the limit with a hint. The signs: std::bad_alloc or
// an allocator's message in its error text, or death by SIGKILL, SIGSEGV, SIGABRT or SIGBUS (a
// failed mmap of a thread stack or a library segment ends that way). A timeout stays a timeout.
void ClassifyOutOfMemory(int64_t limit_bytes, store::JobRecord& job);

// The conversion retry rule (src/convert/retry.h) applied to a whole job: transient when the job
// was killed by SIGKILL from outside the batch (category "killed": the kernel's OOM killer, a
// node shutdown), exited with 75 (EX_TEMPFAIL), or could not run with an error text that
// mentions "temporarily", "temporary failure", "try again" or "connection" (a download or a
// license server). Never transient: a pass or a gate failure, a missing or corrupt file, a usage
// error, a crash by another signal, "oom" under --job-memory (the same limit fails the same way)
// and a job timeout (it already spent the whole timeout, including the conversion's own retries).
bool IsTransientJobFailure(const store::JobRecord& job);

// Seconds before attempt `attempt` (2-based: the first retry): 1 s, doubling, at most 30 s.
double JobRetryBackoffSeconds(int attempt);

}  // namespace convgate::batch
