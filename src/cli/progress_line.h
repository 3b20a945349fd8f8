// The CLI's progress sink (core/progress.h) on stderr: on a terminal one line redrawn in place
// (the task, steps done of total, its detail, elapsed time and ETA; redrawn at most every 50 ms),
// refreshed every second so a
// silent export still shows time passing, erased when the task ends; otherwise a plain line once a
// task has run kPlainEvery and every kPlainEvery after (logs keep every line, no \r); nothing with
// --quiet or CONVGATE_PROGRESS=0. stdout (tables, --json) never carries it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "convgate/core/progress.h"

namespace convgate::cli {

// "0:42", "1:02:03".
std::string ProgressClock(double seconds);
// Columns of the terminal on stderr (100 when it does not say).
size_t StderrWidth();

// --quiet of the command that runs (set while its flags are applied, read before it executes).
void SetQuietProgress();
bool QuietProgress();

class ProgressLine : public ProgressSink {
 public:
  enum class Mode { kQuiet, kLines, kTerminal };
  // kQuiet when `quiet` or CONVGATE_PROGRESS=0; kTerminal when stderr is a terminal (TERM not
  // "dumb"); else kLines.
  static Mode ModeFor(bool quiet);
  static constexpr std::chrono::seconds kPlainEvery{10};
  static constexpr std::chrono::milliseconds kRedrawEvery{50};

  explicit ProgressLine(Mode mode);
  ~ProgressLine() override;  // erases the line, stops the refresh
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Update(const ProgressState& state, bool ended) override;

  // The text for `state` (tests): "per-node [3/12] chunk 2 of 5 | 0:12, ETA 0:36", cut to width.
  static std::string Text(const ProgressState& state, size_t width);

 private:
  void Draw();  // REQUIRES: mutex_ held
  void Refresh();

  const Mode mode_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
  bool shown_ = false;  // a terminal line is on screen
  ProgressState state_;
  std::chrono::steady_clock::time_point state_time_;  // when state_ came
  std::chrono::steady_clock::time_point last_draw_;   // kTerminal: the last redraw
  std::chrono::steady_clock::time_point last_plain_;  // kLines: when the last line was printed
  bool printed_plain_ = false;                        // kLines: this task printed a line
  std::thread refresher_;
};

}  // namespace convgate::cli
