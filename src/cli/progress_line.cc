#include "cli/progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "cli/flag_groups.h"

namespace convgate::cli {

namespace {
bool g_quiet = false;
}  // namespace

void SetQuietProgress() { g_quiet = true; }
bool QuietProgress() { return g_quiet; }

std::string ProgressClock(double seconds) {
  const long total = static_cast<long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%ld:%02ld", total / 60, total % 60);
  }
  return text;
}

size_t StderrWidth() {
  struct winsize size {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return 100;
}

ProgressLine::Mode ProgressLine::ModeFor(bool quiet) {
  const char* setting = std::getenv("CONVGATE_PROGRESS");
  if (quiet || (setting != nullptr && std::strcmp(setting, "0") == 0)) return Mode::kQuiet;
  const char* term = std::getenv("TERM");
  const bool dumb = term != nullptr && std::strcmp(term, "dumb") == 0;
  return ::isatty(STDERR_FILENO) && !dumb ? Mode::kTerminal : Mode::kLines;
}

ProgressLine::ProgressLine(Mode mode) : mode_(mode) {
  if (mode_ == Mode::kTerminal) refresher_ = std::thread([this] { Refresh(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    if (shown_) std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
  }
  wake_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

std::string ProgressLine::Text(const ProgressState& state, size_t width) {
  std::string line = state.task;
  if (state.total > 0) {
    line += " [" + std::to_string(state.done) + "/" + std::to_string(state.total) + "]";
  }
  if (!state.detail.empty()) line += " " + state.detail;
  line += " | " + ProgressClock(state.elapsed_seconds);
  // Time per step so far times the steps left: what a waiting user wants to know.
  if (state.total > 0 && state.done > 0 && state.done < state.total) {
    line += ", ETA " + ProgressClock(state.elapsed_seconds / static_cast<double>(state.done) *
                                     static_cast<double>(state.total - state.done));
  }
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

void ProgressLine::Update(const ProgressState& state, bool ended) {
  if (mode_ == Mode::kQuiet) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool new_task = state.task != state_.task;
  state_ = state;
  state_time_ = now;
  if (mode_ == Mode::kTerminal) {
    if (ended) {
      std::cerr << "\r\x1b[K" << std::flush;  // the result (or an outer task) follows
      shown_ = false;
      return;
    }
    // At most kRedrawEvery between redraws of one task (thousands of fast samples would
    // otherwise write a line each); a new task shows at once, the refresh catches up.
    if (new_task || !shown_ || now - last_draw_ >= kRedrawEvery) Draw();
    return;
  }
  // Plain lines: nothing for short work; a long task says where it is every kPlainEvery.
  if (new_task) printed_plain_ = false;
  const bool due = state.elapsed_seconds >= std::chrono::duration<double>(kPlainEvery).count() &&
                   (!printed_plain_ || now - last_plain_ >= kPlainEvery);
  if ((ended && printed_plain_) || (!ended && due)) {
    std::cerr << "convgate: " << ForTerminal(Text(state, 200)) << (ended ? " (done)" : "") << "\n";
    last_plain_ = now;
    printed_plain_ = !ended;
  }
}

void ProgressLine::Draw() {
  ProgressState shown = state_;
  shown.elapsed_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - state_time_).count();
  std::cerr << "\r\x1b[K" << ForTerminal(Text(shown, StderrWidth() - 1)) << std::flush;
  shown_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressLine::Refresh() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (!stopped_ && shown_) Draw();
  }
}

}  // namespace convgate::cli
