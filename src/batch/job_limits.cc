#include <signal.h>

#include <algorithm>
#include <cctype>

#include "convgate/batch/job_policy.h"
#include "convgate/core/units.h"

namespace convgate::batch {
namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// What allocation failures print: C++ (std::bad_alloc), glibc and the kernel (ENOMEM), ONNX
// Runtime's arena, Python's MemoryError, and the dynamic loader mapping a library.
bool MentionsMemory(const std::string& text) {
  const std::string lower = Lower(text);
  for (const char* sign :
       {"bad_alloc", "bad alloc", "out of memory", "cannot allocate memory", "failed to allocate",
        "memoryerror", "memory allocation", "cannot map", "failed to map",
        // pthread_create's EAGAIN: a thread stack that did not fit the limit
        "resource temporarily unavailable"}) {
    if (lower.find(sign) != std::string::npos) return true;
  }
  return false;
}

bool MemoryLimitSignal(int signal) {
  return signal == SIGKILL || signal == SIGSEGV || signal == SIGABRT || signal == SIGBUS;
}

}  // namespace

void ClassifyOutOfMemory(int64_t limit_bytes, store::JobRecord& job) {
  if (limit_bytes <= 0 || job.verdict != Verdict::kError || job.error_category == "timeout") return;
  if (!MemoryLimitSignal(job.signal) && !MentionsMemory(job.error_text)) return;
  job.error_category = "oom";
  job.error_text = "out of memory under --job-memory " + FormatBytes(limit_bytes) +
                   " (RLIMIT_AS, the job's address space)\n" + job.error_text +
                   "\nhint: raise --job-memory for this batch (address space counts what a "
                   "runtime reserves, not only what it touches: ONNX Runtime's thread pools and "
                   "arenas reserve hundreds of MB), or run this entry on its own";
}

}  // namespace convgate::batch
