// Helpers shared by the io tests: temporary folders, deterministic tensors of every dtype, a
// hand-rolled zip writer for archives libzip refuses to create, and a runner for Debian's python3.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io::testing {

// Whether `address` lies in a mapping of `file` (/proc/self/maps): a tensor read in place rather
// than copied.
inline bool InMappingOf(const void* address, const std::filesystem::path& file) {
  const std::string wanted = std::filesystem::canonical(file).string();
  std::FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return false;
  char line[4096];
  bool found = false;
  while (!found && std::fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long begin = 0;
    unsigned long end = 0;
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &begin, &end, &path_at) < 2) continue;
    std::string path(line + path_at);
    if (!path.empty() && path.back() == '\n') path.pop_back();
    const auto at = reinterpret_cast<uintptr_t>(address);
    found = path == wanted && at >= begin && at < end;
  }
  std::fclose(maps);
  return found;
}

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("convgate_io_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A tensor whose bytes follow a fixed pseudo-random sequence (so NaN payloads, denormals and
// extreme integers all occur); bool bytes are 0 or 1, the only values the readers keep.
inline Tensor PatternTensor(DType dtype, Shape shape, uint32_t seed = 1) {
  Result<Tensor> tensor = Tensor::Allocate(dtype, std::move(shape));
  if (!tensor.ok()) std::abort();
  uint32_t state = seed * 2654435761u + 12345u;
  for (std::byte& value : tensor->bytes()) {
    state = state * 1664525u + 1013904223u;  // Numerical Recipes LCG
    const uint8_t bits = static_cast<uint8_t>(state >> 24);
    value = std::byte{dtype == DType::kBool ? static_cast<uint8_t>(bits & 1) : bits};
  }
  return std::move(tensor).value();
}

// Lower-case hex of the bytes, as numpy_interop.py prints them.
inline std::string Hex(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (std::byte value : bytes) {
    hex.push_back(kDigits[static_cast<uint8_t>(value) >> 4]);
    hex.push_back(kDigits[static_cast<uint8_t>(value) & 0xF]);
  }
  return hex;
}

inline uint32_t Crc32(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

struct ZipMember {
  std::string name;
  std::string data;
  uint16_t method = 0;  // 0 stored; anything else is declared but the data is still stored as is
  uint16_t flags = 0;   // bit 0: encrypted
  // Declared sizes when set, instead of data.size() (headers that lie, as fuzzers write them).
  std::optional<uint32_t> forged_size = std::nullopt;
  std::optional<uint32_t> forged_compressed_size = std::nullopt;
};

// A minimal zip archive of stored members (APPNOTE.TXT 4.3.7, 4.3.12, 4.3.16), for archives that
// libzip will not write: duplicate names, non-.npy members, odd methods and flags.
inline std::string MakeZip(const std::vector<ZipMember>& members) {
  auto put16 = [](std::string& out, uint32_t v) {
    out.push_back(static_cast<char>(v & 0xFF));
    out.push_back(static_cast<char>((v >> 8) & 0xFF));
  };
  auto put32 = [&](std::string& out, uint32_t v) {
    put16(out, v & 0xFFFF);
    put16(out, v >> 16);
  };
  std::string body;
  std::string directory;
  for (const ZipMember& member : members) {
    const uint32_t offset = static_cast<uint32_t>(body.size());
    const uint32_t crc = Crc32(member.data);
    const uint32_t size = member.forged_size.value_or(static_cast<uint32_t>(member.data.size()));
    const uint32_t compressed_size = member.forged_compressed_size.value_or(size);
    body += "PK\x03\x04";
    for (uint32_t v : {20u, uint32_t{member.flags}, uint32_t{member.method}, 0u, 0x21u}) {
      put16(body, v);  // version, flags, method, time, date (1980-01-01)
    }
    put32(body, crc);
    put32(body, compressed_size);
    put32(body, size);
    put16(body, static_cast<uint32_t>(member.name.size()));
    put16(body, 0);
    body += member.name + member.data;
    directory += "PK\x01\x02";
    for (uint32_t v : {20u, 20u, uint32_t{member.flags}, uint32_t{member.method}, 0u, 0x21u}) {
      put16(directory, v);  // made by, needed, flags, method, time, date
    }
    put32(directory, crc);
    put32(directory, compressed_size);
    put32(directory, size);
    for (uint32_t v : {static_cast<uint32_t>(member.name.size()), 0u, 0u, 0u, 0u}) {
      put16(directory, v);  // name length, extra, comment, disk, internal attributes
    }
    put32(directory, 0);  // external attributes
    put32(directory, offset);
    directory += member.name;
  }
  std::string out = body + directory + "PK\x05\x06";
  for (uint32_t v :
       {0u, 0u, static_cast<uint32_t>(members.size()), static_cast<uint32_t>(members.size())}) {
    put16(out, v);
  }
  put32(out, static_cast<uint32_t>(directory.size()));
  put32(out, static_cast<uint32_t>(body.size()));
  put16(out, 0);
  return out;
}

inline std::string ReadAll(const std::filesystem::path& path) {
  std::string contents;
  if (FILE* file = std::fopen(path.c_str(), "rb")) {
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) contents.append(buffer, n);
    std::fclose(file);
  }
  return contents;
}

inline void WriteAll(const std::filesystem::path& path, std::string_view contents) {
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) std::abort();
  std::fwrite(contents.data(), 1, contents.size(), file);
  std::fclose(file);
}

// Debian's python3 carries python3-numpy; the pyenv python first on PATH does not.
constexpr const char* kPython = "/usr/bin/python3";

inline bool PythonHasNumpy() {
  const std::string command = std::string(kPython) + " -c 'import numpy' >/dev/null 2>&1";
  return std::system(command.c_str()) == 0;
}

// Runs `command` through the shell and returns its stdout and exit status.
inline std::pair<int, std::string> RunCommand(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, output};
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  return {::pclose(pipe), output};
}

inline std::vector<std::string> Split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

}  // namespace convgate::io::testing
