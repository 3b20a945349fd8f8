// Progress of long work, told to whoever watches: library code marks a task and its steps
// (ProgressTask), a sink the program installs shows them (the CLI: a line on stderr redrawn in
// place on a terminal, plain periodic lines otherwise, nothing with --quiet). Without a sink the
// calls cost a relaxed atomic load.
#pragma once

#include <cstdint>
#include <string>

namespace convgate {

// What a sink is told: the innermost running task's name, its steps done of total (total 0: not
// counted, time only) and a detail ("chunk 2 of 5", "attempt 2").
struct ProgressState {
  std::string task;
  int64_t done = 0;
  int64_t total = 0;
  std::string detail;
  double elapsed_seconds = 0;  // since the task began
};

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A task began, advanced or ended (`ended`: the state as it finished). Called from the working
  // thread; a sink serializes what it draws.
  virtual void Update(const ProgressState& state, bool ended) = 0;
};

// The process's sink (nullptr: none). The caller keeps it alive until it installs another.
void SetProgressSink(ProgressSink* sink);

// A task while it lives: its beginning on construction, its steps through Advance, its end on
// destruction. Nested tasks report the innermost; when it ends the outer one shows again.
class ProgressTask {
 public:
  explicit ProgressTask(std::string task, int64_t total = 0);
  ~ProgressTask();
  ProgressTask(const ProgressTask&) = delete;
  ProgressTask& operator=(const ProgressTask&) = delete;

  void Advance(int64_t done, std::string detail = "");

 private:
  void Tell(bool ended);

  ProgressState state_;
  ProgressTask* outer_;
  const int64_t start_ns_;
};

}  // namespace convgate
