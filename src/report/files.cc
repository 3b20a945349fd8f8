#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "convgate/core/file_util.h"
#include "convgate/report/report.h"

namespace convgate::report {

using nlohmann::json;

std::string ErrorLine(const gate::GateError& error) {
  return "error (" + std::string(gate::StageName(error.stage)) + "): " + error.status.message();
}

std::string JsonText(const json& value, bool pretty) {
  // nlohmann's dump(-1) is its compact form: no spaces or newlines at all.
  return value.dump(pretty ? 2 : -1) + "\n";
}

Status WriteResultFiles(const std::filesystem::path& dir, const json& report,
                        const json& verify_result, const std::string& junit,
                        const ResultFileOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return Status::Unavailable("cannot create result folder " + dir.string() + ": " + ec.message());
  }
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(dir / "report.json", JsonText(report, options.pretty)));
  CONVGATE_RETURN_IF_ERROR(
      WriteFileAtomic(dir / "verify_result.json", JsonText(verify_result, options.pretty)));
  return WriteFileAtomic(dir / "junit.xml", junit);
}

std::string UtcNow() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

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
