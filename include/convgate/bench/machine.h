// What the machine was doing while a benchmark ran, as far as Linux tells: the load, the CPUs this
// process may use, how their frequency is governed; and this process's memory and CPU affinity.
// A figure measured on a busy or throttled machine is reported with a warning, never silently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::bench {

struct MachineState {
  int online_cpus = 0;   // sysconf(_SC_NPROCESSORS_ONLN)
  int allowed_cpus = 0;  // in this process's affinity mask
  std::string affinity;  // "0-1", the mask as a CPU list
  // /proc/loadavg before and after the measurement (1-minute average).
  double load_before = 0.0;
  double load_after = 0.0;
  // Each distinct scaling_governor of the allowed CPUs ("performance", "powersave"), or
  // "not exposed" when /sys has no cpufreq (most virtual machines).
  std::string governor;
  std::vector<std::string> warnings;
};

// The state before measuring (load_before, CPUs, governor).
MachineState ReadMachineState();

// Completes `state` after measuring: load_after, and the warnings: a load average above half the
// allowed CPUs before or after (other work competed), a governor other than "performance" (clock
// speed varies with load), and more runtime threads than allowed CPUs (`busiest_threads`: the
// largest intra-op x streams of a side; 0 when the runtime chose its own).
void FinishMachineState(MachineState& state, int busiest_threads);

// This process's resident memory now, and its peak since the last ResetPeakRss (VmRSS, VmHWM in
// /proc/self/status); 0 when unknown.
int64_t CurrentRssBytes();
int64_t PeakRssBytes();
// Starts a new peak (writes 5 to /proc/self/clear_refs); false where Linux refuses, and then the
// peak is the process's whole life.
bool ResetPeakRss();

// "0-1,4" for the CPUs in this process's affinity mask.
std::string AffinityText();
// Parses "0-3,6" into CPU numbers; InvalidArgument naming the text otherwise.
Result<std::vector<int>> ParseCpuList(const std::string& text);

// Pins the process (every thread created afterwards) to `cpus` until destroyed, then restores the
// mask it found. An empty list changes nothing.
class ScopedAffinity {
 public:
  static Result<ScopedAffinity> Pin(const std::vector<int>& cpus);
  ScopedAffinity(ScopedAffinity&& other) noexcept;
  ScopedAffinity& operator=(ScopedAffinity&&) = delete;
  ~ScopedAffinity();

 private:
  ScopedAffinity() = default;
  std::vector<int> saved_;
  bool active_ = false;
};

}  // namespace convgate::bench
