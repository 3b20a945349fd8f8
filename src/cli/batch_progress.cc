#include "cli/batch_progress.h"

#include <iostream>

#include "cli/flag_groups.h"
#include "cli/progress_line.h"
#include "convgate/batch/batch.h"
#include "convgate/core/units.h"

namespace convgate::cli {

BatchProgress::Mode BatchProgress::ModeFor(bool quiet) { return ProgressLine::ModeFor(quiet); }

BatchProgress::BatchProgress(Mode mode) : mode_(mode) {
  if (mode_ == Mode::kTerminal) refresher_ = std::thread([this] { Refresh(); });
}

BatchProgress::~BatchProgress() { Stop(); }

void BatchProgress::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    // Erase the line: the summary table follows.
    if (mode_ == Mode::kTerminal) std::cerr << "\r\x1b[K" << std::flush;
  }
  wake_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

void BatchProgress::Started(const std::string& entry_id, int total) {
  if (mode_ != Mode::kTerminal) return;
  std::lock_guard<std::mutex> lock(mutex_);
  running_.insert(entry_id);
  total_ = total;
  Draw();
}

void BatchProgress::Finished(const store::JobRecord& job, int done, int total) {
  if (mode_ == Mode::kQuiet) return;
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(job.entry_id);
  done_ = done;
  total_ = total;
  if (job.verdict == Verdict::kPass) ++passed_;
  if (job.verdict == Verdict::kFail) ++failed_;
  if (job.verdict == Verdict::kError) ++errors_;
  if (mode_ == Mode::kTerminal) {
    // A failure or error keeps a line of its own above the progress line, so it is not lost.
    if (job.verdict != Verdict::kPass) {
      std::string line = job.entry_id + " " + batch::VerdictWord(job.verdict);
      if (!job.error_category.empty()) line += " (" + job.error_category + ")";
      std::cerr << "\r\x1b[K" << ForTerminal(line) << "\n";
    }
    Draw();
    return;
  }
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " +
                     job.entry_id + " " + std::string(VerdictName(job.verdict));
  if (!job.error_category.empty()) line += " (" + job.error_category + ")";
  std::cerr << ForTerminal(line + " " + FormatSeconds(job.duration_seconds)) << "\n";
}

std::string BatchProgress::Line(int done, int total, int passed, int failed, int errors,
                                double elapsed, const std::set<std::string>& running,
                                size_t width) {
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + "] " +
                     std::to_string(passed) + " passed, " + std::to_string(failed) + " failed, " +
                     std::to_string(errors) + (errors == 1 ? " error | " : " errors | ") +
                     ProgressClock(elapsed);
  // The mean time per finished job times the jobs left: rough with -j N and uneven models, but
  // what a waiting user wants to know.
  line += done > 0 && done < total ? ", ETA " + ProgressClock(elapsed / done * (total - done))
                                   : std::string(done == 0 ? ", ETA -" : "");
  if (!running.empty()) {
    std::string names;
    for (const std::string& id : running) names += (names.empty() ? "" : ", ") + id;
    line += " | running: " + names;
  }
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

void BatchProgress::Draw() {
  if (stopped_) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::cerr << "\r\x1b[K"
            << ForTerminal(Line(done_, total_, passed_, failed_, errors_, elapsed, running_,
                                StderrWidth() - 1))
            << std::flush;
}

void BatchProgress::Refresh() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (!stopped_ && total_ > 0) Draw();
  }
}

}  // namespace convgate::cli
