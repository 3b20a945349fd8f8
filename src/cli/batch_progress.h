// The progress of `convgate batch` on stderr: on a terminal, one line redrawn in place (done/total,
// passed/failed/errors, elapsed, ETA, the entries running now), refreshed every second so a long
// job still shows time passing; otherwise one plain line per finished job (logs and CI keep every
// line and no \r); nothing with --quiet.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "cli/progress_line.h"
#include "convgate/store/store.h"

namespace convgate::cli {

class BatchProgress {
 public:
  using Mode = ProgressLine::Mode;
  // As ProgressLine's: kQuiet if quiet (or CONVGATE_PROGRESS=0), kTerminal on a terminal.
  static Mode ModeFor(bool quiet);

  explicit BatchProgress(Mode mode);
  ~BatchProgress();  // stops the refresh and ends the line
  BatchProgress(const BatchProgress&) = delete;
  BatchProgress& operator=(const BatchProgress&) = delete;

  void Started(const std::string& entry_id, int total);
  void Finished(const store::JobRecord& job, int done, int total);
  // Clears the progress line before the summary is printed.
  void Stop();

  // The terminal line for these counts (tests): "[3/10] 2 passed, 1 failed, 0 errors | 12 s,
  // ETA 28 s | running: a, b", cut to `width` columns.
  static std::string Line(int done, int total, int passed, int failed, int errors, double elapsed,
                          const std::set<std::string>& running, size_t width);

 private:
  void Draw();  // REQUIRES: mutex_ held
  void Refresh();

  const Mode mode_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  std::set<std::string> running_;
  int done_ = 0;
  int total_ = 0;
  int passed_ = 0;
  int failed_ = 0;
  int errors_ = 0;
  std::thread refresher_;
};

}  // namespace convgate::cli
