#include "convgate/bench/machine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "convgate/core/numbers.h"

namespace convgate::bench {
namespace {

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0.0;
  in >> one_minute;
  return in ? one_minute : 0.0;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

std::string CpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i) text += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

std::string Governors(const std::vector<int>& cpus) {
  std::set<std::string> seen;
  for (int cpu : cpus) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                     "/cpufreq/scaling_governor");
    std::string governor;
    if (in >> governor) seen.insert(governor);
  }
  if (seen.empty()) return "not exposed";
  std::string text;
  for (const std::string& governor : seen) text += (text.empty() ? "" : ",") + governor;
  return text;
}

int64_t StatusKilobytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kilobytes = 0;
    fields >> kilobytes;
    return kilobytes * 1024;
  }
  return 0;
}

Status SetAffinity(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return Status::InvalidArgument("cannot pin to CPUs " + CpuListText(cpus) +
                                   ": the process may use only " + CpuListText(AllowedCpus()));
  }
  return Status::OK();
}

}  // namespace

MachineState ReadMachineState() {
  MachineState state;
  state.online_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const std::vector<int> allowed = AllowedCpus();
  state.allowed_cpus = static_cast<int>(allowed.size());
  state.affinity = CpuListText(allowed);
  state.governor = Governors(allowed);
  state.load_before = LoadAverage();
  return state;
}

void FinishMachineState(MachineState& state, int busiest_threads) {
  state.load_after = LoadAverage();
  const double busy = std::max(1.0, state.allowed_cpus / 2.0);
  const double load = std::max(state.load_before, state.load_after);
  if (load > busy) {
    state.warnings.push_back(
        "the machine was busy: load average " + FormatSignificant(load, 3) + " on " +
        std::to_string(state.allowed_cpus) +
        " CPUs (above half of them); other work competed with the measurement, so the latencies "
        "may be high and noisy: measure again on an idle machine");
  }
  if (state.governor != "not exposed" && state.governor != "performance") {
    state.warnings.push_back("CPU frequency scaling is on (governor " + state.governor +
                             "): clock speed follows load, so short runs vary; set the "
                             "'performance' governor for stable figures");
  }
  if (busiest_threads > state.allowed_cpus && state.allowed_cpus > 0) {
    state.warnings.push_back(
        "threads oversubscribed: a side runs " + std::to_string(busiest_threads) +
        " runtime threads at once on " + std::to_string(state.allowed_cpus) +
        " CPUs; threads wait for each other and latency includes it (lower --threads or "
        "--streams)");
  }
}

int64_t CurrentRssBytes() { return StatusKilobytes("VmRSS"); }
int64_t PeakRssBytes() { return StatusKilobytes("VmHWM"); }

bool ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::string AffinityText() { return CpuListText(AllowedCpus()); }

Result<std::vector<int>> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream parts(text);
  std::string part;
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("'" + text + "' is not a CPU list (e.g. 0-3,6): " + why);
  };
  while (std::getline(parts, part, ',')) {
    const size_t dash = part.find('-');
    Result<int64_t> first = ParseInteger(part.substr(0, dash), 0, CPU_SETSIZE - 1);
    if (!first.ok()) return bad(first.status().message());
    int64_t last = *first;
    if (dash != std::string::npos) {
      Result<int64_t> end = ParseInteger(part.substr(dash + 1), 0, CPU_SETSIZE - 1);
      if (!end.ok()) return bad(end.status().message());
      last = *end;
    }
    if (last < *first) return bad(part + " runs backwards");
    for (int64_t cpu = *first; cpu <= last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  if (cpus.empty()) return bad("no CPUs");
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

Result<ScopedAffinity> ScopedAffinity::Pin(const std::vector<int>& cpus) {
  ScopedAffinity pinned;
  if (cpus.empty()) return pinned;
  pinned.saved_ = AllowedCpus();
  CONVGATE_RETURN_IF_ERROR(SetAffinity(cpus));
  pinned.active_ = true;
  return pinned;
}

ScopedAffinity::ScopedAffinity(ScopedAffinity&& other) noexcept
    : saved_(std::move(other.saved_)), active_(other.active_) {
  other.active_ = false;
}

ScopedAffinity::~ScopedAffinity() {
  if (active_) (void)SetAffinity(saved_);
}

}  // namespace convgate::bench
