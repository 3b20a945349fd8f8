#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <optional>
#include <thread>

#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "convgate/report/json_text.h"
#include "convgate/report/report.h"

namespace convgate::report {

using nlohmann::json;

std::string ErrorLine(const gate::GateError& error) {
  return "error (" + std::string(gate::StageName(error.stage)) + "): " + error.status.message();
}

std::string JsonText(const json& value, bool pretty) {
  // nlohmann's dump(-1) is its compact form: no spaces or newlines at all.
  return DumpJson(value, pretty ? 2 : -1) + "\n";
}

Status WriteResultFiles(const std::filesystem::path& dir, const json& report,
                        const json& verify_result, const std::string& junit, bool pretty) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::Unavailable("cannot create result folder " + dir.string() + ": " + ec.message());
  }
  // verify_result.json is six fields that people read: always indented; its fields are fixed, so
  // it does not list what DumpJson escaped (report.json does).
  const std::pair<const char*, std::string> files[] = {
      {"report.json", DumpJson(report, pretty ? 2 : -1) + "\n"},
      {"verify_result.json", DumpJson(verify_result, 2, /*list_escaped=*/false) + "\n"},
      {"junit.xml", junit},
  };
  // Each file on its own: a CI job that reads only junit.xml still gets it when report.json could
  // not be written, and the error names every file that failed.
  std::optional<Status> first_failure;
  std::string failures;
  for (const auto& [name, text] : files) {
    Status written = WriteFileAtomic(dir / name, text);
    if (written.ok()) continue;
    if (!first_failure) first_failure = written;
    failures += (failures.empty() ? "" : "; ") + written.message();
  }
  if (!first_failure) return Status::OK();
  return Status(first_failure->code(), failures);
}

Status WriteVerifyResultFile(const std::filesystem::path& dir, const json& verify_result) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::Unavailable("cannot create result folder " + dir.string() + ": " + ec.message());
  }
  return WriteFileAtomic(dir / "verify_result.json",
                         DumpJson(verify_result, 2, /*list_escaped=*/false) + "\n");
}

std::string UtcNow() { return UtcIso8601Now(); }

namespace {

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

}  // namespace

json HostJson() {
  char hostname[256] = {};
  ::gethostname(hostname, sizeof(hostname) - 1);
  struct utsname uts {};
  ::uname(&uts);
  struct sysinfo info {};
  ::sysinfo(&info);
  return json{{"hostname", hostname},
              {"os", uts.sysname},
              {"kernel", uts.release},
              {"arch", uts.machine},
              {"cpu", CpuModel()},
              {"logical_cores", std::thread::hardware_concurrency()},
              {"memory_bytes", static_cast<uint64_t>(info.totalram) * info.mem_unit}};
}

}  // namespace convgate::report
