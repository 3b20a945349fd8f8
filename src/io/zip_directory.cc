#include "io/zip_directory.h"

#include <algorithm>

namespace convgate::io::internal {
namespace {

// Record signatures and fixed sizes (PKWARE APPNOTE 6.3, sections 4.3.7 to 4.3.16).
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr size_t kLocalHeaderBytes = 30;
constexpr size_t kCentralHeaderBytes = 46;
constexpr size_t kEndBytes = 22;
constexpr size_t kZip64LocatorBytes = 20;
constexpr size_t kZip64EndBytes = 56;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;

// Little-endian reads, bounds-checked by the callers through Has().
class Bytes {
 public:
  explicit Bytes(std::span<const std::byte> bytes) : bytes_(bytes) {}

  bool Has(uint64_t offset, uint64_t count) const {
    return offset <= bytes_.size() && count <= bytes_.size() - offset;
  }
  uint64_t Read(uint64_t offset, int width) const {
    uint64_t value = 0;
    for (int idx = width - 1; idx >= 0; --idx) {
      value = value << 8 | std::to_integer<uint64_t>(bytes_[offset + static_cast<uint64_t>(idx)]);
    }
    return value;
  }
  uint64_t size() const { return bytes_.size(); }

 private:
  std::span<const std::byte> bytes_;
};

struct Directory {
  uint64_t offset = 0;
  uint64_t entries = 0;
};

// The end-of-central-directory record is the last thing in the file, followed only by a comment
// of up to 65535 bytes; the search goes backwards so a signature inside the comment loses.
std::optional<uint64_t> FindEnd(const Bytes& zip) {
  if (zip.size() < kEndBytes) return std::nullopt;
  const uint64_t last = zip.size() - kEndBytes;
  const uint64_t first = last > 0xFFFF ? last - 0xFFFF : 0;
  for (uint64_t at = last + 1; at-- > first;) {
    if (zip.Read(at, 4) == kEndOfDirectory && at + kEndBytes + zip.Read(at + 20, 2) == zip.size()) {
      return at;
    }
  }
  return std::nullopt;
}

std::optional<Directory> FindDirectory(const Bytes& zip) {
  const std::optional<uint64_t> end = FindEnd(zip);
  if (!end) return std::nullopt;
  Directory directory{zip.Read(*end + 16, 4), zip.Read(*end + 10, 2)};
  const bool zip64 = directory.offset == kSaturated32 || directory.entries == 0xFFFF;
  if (!zip64) return directory;
  if (*end < kZip64LocatorBytes) return std::nullopt;
  const uint64_t locator = *end - kZip64LocatorBytes;
  if (zip.Read(locator, 4) != kZip64Locator) return std::nullopt;
  const uint64_t record = zip.Read(locator + 8, 8);
  if (!zip.Has(record, kZip64EndBytes) || zip.Read(record, 4) != kZip64End) return std::nullopt;
  return Directory{zip.Read(record + 48, 8), zip.Read(record + 32, 8)};
}

// The zip64 extra field holds, in this order, only the values saturated in the fixed record.
bool ReadZip64Extra(const Bytes& zip, uint64_t extra, uint64_t extra_end, bool size_saturated,
                    uint64_t& compressed, uint64_t& local) {
  while (extra + 4 <= extra_end) {
    const uint64_t id = zip.Read(extra, 2);
    const uint64_t length = zip.Read(extra + 2, 2);
    const uint64_t body = extra + 4;
    if (body + length > extra_end) return false;
    if (id == kZip64ExtraId) {
      uint64_t at = body;
      const auto next = [&](uint64_t& value) {
        if (at + 8 > body + length) return false;
        value = zip.Read(at, 8);
        at += 8;
        return true;
      };
      uint64_t ignored = 0;
      if (size_saturated && !next(ignored)) return false;  // uncompressed size
      if (compressed == kSaturated32 && !next(compressed)) return false;
      if (local == kSaturated32 && !next(local)) return false;
      return true;
    }
    extra = body + length;
  }
  return compressed != kSaturated32 && local != kSaturated32;
}

// A local header's data offset; the sizes come from the central directory, because a member
// written to a pipe leaves them 0 in its local header.
std::optional<uint64_t> DataOffset(const Bytes& zip, uint64_t local) {
  if (!zip.Has(local, kLocalHeaderBytes) || zip.Read(local, 4) != kLocalHeader) {
    return std::nullopt;
  }
  return local + kLocalHeaderBytes + zip.Read(local + 26, 2) + zip.Read(local + 28, 2);
}

}  // namespace

std::optional<std::vector<ZipMemberData>> ZipMemberOffsets(std::span<const std::byte> archive) {
  const Bytes zip(archive);
  const std::optional<Directory> directory = FindDirectory(zip);
  // Each record takes at least kCentralHeaderBytes: a count the file cannot hold is a lie.
  if (!directory || directory->entries > zip.size() / kCentralHeaderBytes) return std::nullopt;
  std::vector<ZipMemberData> members;
  members.reserve(static_cast<size_t>(directory->entries));
  uint64_t at = directory->offset;
  for (uint64_t entry = 0; entry < directory->entries; ++entry) {
    if (!zip.Has(at, kCentralHeaderBytes) || zip.Read(at, 4) != kCentralHeader) {
      return std::nullopt;
    }
    const uint64_t name = zip.Read(at + 28, 2);
    const uint64_t extra = zip.Read(at + 30, 2);
    const uint64_t comment = zip.Read(at + 32, 2);
    const uint64_t record_end = at + kCentralHeaderBytes + name + extra + comment;
    if (record_end > zip.size()) return std::nullopt;
    uint64_t compressed = zip.Read(at + 20, 4);
    uint64_t local = zip.Read(at + 42, 4);
    const bool size_saturated = zip.Read(at + 24, 4) == kSaturated32;
    if ((size_saturated || compressed == kSaturated32 || local == kSaturated32) &&
        !ReadZip64Extra(zip, at + kCentralHeaderBytes + name,
                        at + kCentralHeaderBytes + name + extra, size_saturated, compressed,
                        local)) {
      return std::nullopt;
    }
    const std::optional<uint64_t> data = DataOffset(zip, local);
    if (!data || !zip.Has(*data, compressed)) return std::nullopt;
    members.push_back({*data, compressed});
    at = record_end;
  }
  return members;
}

}  // namespace convgate::io::internal
