// record.json, and the small file-system facts the cache needs.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>

#include "convert/cache_internal.h"
#include "convgate/core/file_util.h"
#include "convgate/core/json_field.h"

namespace convgate::convert {
namespace {

// Bumped when record.json changes incompatibly; a record of another version reads as corrupt
// and is rebuilt.
constexpr int kRecordSchemaVersion = 1;

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "host";
  std::string host(name);
  for (char& c : host) {
    if (c == '.' || c == '/') c = '_';
  }
  return host.empty() ? "host" : host;
}

}  // namespace

std::string RecordToJson(const CachedConversion& record) {
  nlohmann::json json = {
      {"schema_version", kRecordSchemaVersion},
      {"key", record.key},
      {"kind", record.kind},
      {"tool", record.tool},
      {"tool_version", record.tool_version},
      {"converter", record.converter},
      {"params", record.params},
      {"source", {{"path", record.source_path}, {"sha256", record.source_sha256}}},
      {"model",
       {{"file", record.model_file},
        {"sha256", record.model_sha256},
        {"bytes", record.model_bytes}}},
      {"created_unix", record.created_unix},
      {"notes", record.notes}};
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// An integer field: get<int64_t>() of a float beyond int64's range (1e43) is undefined behaviour,
// so anything but a JSON integer is refused (found by fuzz/cache_record_fuzz.cc).
int64_t Integer(const nlohmann::json& value, const char* name) {
  if (!value.is_number_integer()) {
    throw nlohmann::json::type_error::create(302, std::string(name) + " is not an integer", &value);
  }
  return value.get<int64_t>();
}

}  // namespace

Result<CachedConversion> ReadRecord(const std::filesystem::path& entry_dir) {
  const std::filesystem::path path = entry_dir / kRecordFile;
  CONVGATE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxTextFileBytes, "a JSON file"));
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object() || JsonIntOr(json, "schema_version", 0) != kRecordSchemaVersion) {
    return Status::DataLoss(path.string() + " is not a version " +
                            std::to_string(kRecordSchemaVersion) + " conversion record");
  }
  try {
    CachedConversion record;
    record.key = json.at("key").get<std::string>();
    record.kind = json.at("kind").get<std::string>();
    record.tool = json.at("tool").get<std::string>();
    record.tool_version = json.at("tool_version").get<std::string>();
    record.converter = json.at("converter").get<std::string>();
    record.params = json.at("params").get<std::map<std::string, std::string>>();
    record.source_path = json.at("source").at("path").get<std::string>();
    record.source_sha256 = json.at("source").at("sha256").get<std::string>();
    record.model_file = json.at("model").at("file").get<std::string>();
    record.model_sha256 = json.at("model").at("sha256").get<std::string>();
    record.model_bytes = Integer(json.at("model").at("bytes"), "model.bytes");
    record.created_unix = Integer(json.at("created_unix"), "created_unix");
    record.notes = json.at("notes").get<std::vector<std::string>>();
    return record;
  } catch (const nlohmann::json::exception& error) {
    return Status::DataLoss(path.string() + ": " + error.what());
  }
}

int64_t ModifiedUnix(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return 0;
  return static_cast<int64_t>(info.st_mtime);
}

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string WorkDirName(const std::string& prefix) {
  static std::atomic<int64_t> counter{0};
  return prefix + "." + HostName() + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter++);
}

bool IsStaleWorkDir(const std::string& name) {
  const size_t counter_dot = name.rfind('.');
  if (counter_dot == std::string::npos || counter_dot == 0) return false;
  const size_t pid_dot = name.rfind('.', counter_dot - 1);
  if (pid_dot == std::string::npos || pid_dot == 0) return false;
  const size_t host_dot = name.rfind('.', pid_dot - 1);
  if (host_dot == std::string::npos) return false;
  const std::string host = name.substr(host_dot + 1, pid_dot - host_dot - 1);
  const std::string pid_text = name.substr(pid_dot + 1, counter_dot - pid_dot - 1);
  if (host != HostName() || pid_text.empty() ||
      pid_text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  const pid_t pid = static_cast<pid_t>(std::stoll(pid_text));
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace convgate::convert
