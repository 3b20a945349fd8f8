// Slurm through its command-line clients: sbatch to submit, squeue to follow, scontrol for the
// exit codes of finished tasks.
#include <sstream>

#include "convgate/batch/slurm.h"
#include "convgate/core/subprocess.h"

namespace convgate::batch {
namespace {

// A client that has not answered in a minute is stuck on an unreachable controller; the wait
// loop then reports it rather than hanging.
constexpr double kClientTimeoutSeconds = 60.0;
// `scontrol -o show job` prints ~1.5 KB per task: 16 MB holds an array of 10,000 tasks whole.
constexpr size_t kClientOutputBytes = 16 << 20;

// squeue's and scontrol's answer when the controller has already purged the job (MinJobAge).
constexpr char kInvalidJobId[] = "Invalid job id";

std::string Trimmed(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// Runs a Slurm client; its stdout when it exits 0. NotFound naming the client and the package
// when it is not installed; Unavailable with its stderr when it fails.
Result<SubprocessResult> RunClient(const std::vector<std::string>& argv) {
  SubprocessOptions options;
  options.timeout_seconds = kClientTimeoutSeconds;
  options.max_captured_bytes = kClientOutputBytes;
  Result<SubprocessResult> result = RunSubprocess(argv, options);
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kNotFound) {
      return Status::NotFound(argv[0] +
                              " is not on PATH: --slurm needs Slurm's client commands "
                              "(Debian: slurm-client or slurm-wlm), run it on a Slurm login node");
    }
    return result.status();
  }
  return result;
}

std::string ClientFailure(const std::string& what, const SubprocessResult& result) {
  const std::string text = Trimmed(TailLines(result.stderr_tail, 10));
  return what + " " + result.Describe() + (text.empty() ? "" : ": " + text);
}

// "KEY=value" of one `scontrol -o` line; "" when the key is absent.
std::string Field(const std::string& line, const std::string& key) {
  size_t at = 0;
  while ((at = line.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') {
      const size_t start = at + key.size() + 1;
      const size_t end = line.find(' ', start);
      return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
    at += key.size();
  }
  return "";
}

int TaskNumber(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

Result<std::string> SubmitSlurmArray(const std::filesystem::path& script,
                                     const std::vector<std::string>& sbatch_args) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.push_back(script.string());
  CONVGATE_ASSIGN_OR_RETURN(const SubprocessResult result, RunClient(argv));
  if (!result.succeeded()) {
    return Status::Unavailable(ClientFailure("sbatch refused the job array:", result));
  }
  // --parsable prints "jobid" or "jobid;cluster".
  const std::string out = Trimmed(result.stdout_tail);
  const std::string job_id = out.substr(0, out.find(';'));
  if (TaskNumber(job_id) < 0) {
    return Status::Unavailable("sbatch printed no job id (expected a number, got '" + out + "')");
  }
  return job_id;
}

bool SlurmStateIsFinal(const std::string& state) {
  static const char* const kFinal[] = {"COMPLETED", "FAILED",    "CANCELLED",
                                       "TIMEOUT",   "NODE_FAIL", "OUT_OF_MEMORY",
                                       "PREEMPTED", "BOOT_FAIL", "DEADLINE"};
  // scontrol may append a qualifier: "CANCELLED by 0".
  const std::string word = state.substr(0, state.find(' '));
  for (const char* final_state : kFinal) {
    if (word == final_state) return true;
  }
  return false;
}

std::vector<SlurmTaskState> ParseSqueue(const std::string& text) {
  std::vector<SlurmTaskState> tasks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = Trimmed(line);
    const size_t bar = line.find('|');
    if (bar == std::string::npos || bar == 0 || bar + 1 == line.size()) continue;
    SlurmTaskState task;
    task.tasks = line.substr(0, bar);
    task.task = TaskNumber(task.tasks);
    task.state = line.substr(bar + 1);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

std::vector<SlurmTaskState> ParseScontrol(const std::string& text) {
  std::vector<SlurmTaskState> tasks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string state = Field(line, "JobState");
    if (state.empty()) continue;
    SlurmTaskState task;
    task.tasks = Field(line, "ArrayTaskId");
    task.task = TaskNumber(task.tasks);
    task.state = state;
    task.exit_code = Field(line, "ExitCode");
    task.reason = Field(line, "Reason");
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Result<std::vector<SlurmTaskState>> QuerySlurmArray(const std::string& job_id) {
  CONVGATE_ASSIGN_OR_RETURN(const SubprocessResult result,
                            RunClient({"squeue", "-h", "-j", job_id, "-t", "all", "-o", "%K|%T"}));
  if (!result.succeeded()) {
    if (result.stderr_tail.find(kInvalidJobId) != std::string::npos) {
      return std::vector<SlurmTaskState>{};
    }
    return Status::Unavailable(ClientFailure("squeue for job " + job_id, result));
  }
  return ParseSqueue(result.stdout_tail);
}

Result<std::vector<SlurmTaskState>> ShowSlurmArray(const std::string& job_id) {
  CONVGATE_ASSIGN_OR_RETURN(const SubprocessResult result,
                            RunClient({"scontrol", "-o", "show", "job", job_id}));
  if (!result.succeeded()) {
    if (result.stderr_tail.find(kInvalidJobId) != std::string::npos) {
      return std::vector<SlurmTaskState>{};
    }
    return Status::Unavailable(ClientFailure("scontrol show job " + job_id, result));
  }
  return ParseScontrol(result.stdout_tail);
}

}  // namespace convgate::batch
