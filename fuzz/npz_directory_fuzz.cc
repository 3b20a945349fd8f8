// Fuzz target for the zip layer: what convgate does with a zip's central directory, through every
// reader of zips: ParseNpz and ReadNpz (the member listing, the size checks against the archive,
// the reads; ReadNpz's own directory parser for stored members read in place), SniffFile (ListZip
// and the format told from member names, for `inspect` and every side's format check) and
// ReadZipMember.
//
// Inputs are whole archives (a crasher is a file `convgate inspect` reproduces), but under
// libFuzzer a custom mutator changes only the central directory and the end-of-central-directory
// record, and then, three times in four, makes the record agree with the mutated directory (its
// size, offset and entry counts): libzip rejects a directory whose size or count disagree before
// it reads an entry, so without the repair almost no mutation gets past zip_open. One mutation in
// ten is left to libFuzzer on the whole input, so the local headers and data change too. libzip
// itself is Debian's, not instrumented: coverage feedback comes from convgate's code only.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "convgate/io/file_format.h"
#include "convgate/io/npz.h"
#include "memory_file.h"

#ifdef CONVGATE_LIBFUZZER
namespace {

// The end-of-central-directory record (APPNOTE.TXT 4.3.16): signature, disk numbers (2 x 2
// bytes), entries on this disk and in total (2 x 2), directory size (4), directory offset (4),
// comment length (2), comment.
constexpr std::string_view kEocdSignature("PK\x05\x06", 4);
constexpr size_t kEocdSize = 22;
constexpr size_t kMaxCommentSize = 0xffff;
constexpr std::string_view kCentralHeaderSignature("PK\x01\x02", 4);

uint32_t Le(const uint8_t* bytes, int width) {
  uint32_t value = 0;
  for (int byte_idx = width - 1; byte_idx >= 0; --byte_idx) value = (value << 8) | bytes[byte_idx];
  return value;
}

void PutLe(uint8_t* bytes, int width, uint32_t value) {
  for (int byte_idx = 0; byte_idx < width; ++byte_idx) bytes[byte_idx] = (value >> (8 * byte_idx));
}

// The last end-of-central-directory record, searched where a reader looks for it: in the last
// 22 + 65535 bytes (the record and the longest comment).
std::optional<size_t> FindEocd(std::string_view bytes) {
  if (bytes.size() < kEocdSize) return std::nullopt;
  const size_t lowest =
      bytes.size() > kEocdSize + kMaxCommentSize ? bytes.size() - kEocdSize - kMaxCommentSize : 0;
  for (size_t pos = bytes.size() - kEocdSize + 1; pos-- > lowest;) {
    if (bytes.substr(pos, kEocdSignature.size()) == kEocdSignature) return pos;
  }
  return std::nullopt;
}

// Where the directory starts, by the record (clamped to the record itself: a Zip64 archive's
// 0xffffffff, or a lying offset, leaves the whole tail to the mutator).
size_t DirectoryStart(const uint8_t* data, size_t eocd) {
  const size_t declared = Le(data + eocd + 16, 4);
  return declared < eocd ? declared : eocd;
}

// Makes the record describe [start, eocd): its size and offset, and as many entries as there are
// central header signatures in it. Zip64 records, which sit between the two, are left as they are.
void RepairEocd(uint8_t* data, size_t size, size_t start) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::optional<size_t> eocd = FindEocd(bytes);
  if (!eocd || *eocd < start || Le(data + *eocd + 16, 4) == 0xffffffff) return;
  uint32_t entries = 0;
  for (size_t pos = bytes.find(kCentralHeaderSignature, start); pos < *eocd;
       pos = bytes.find(kCentralHeaderSignature, pos + 1)) {
    ++entries;
  }
  if (entries > 0xffff) return;
  PutLe(data + *eocd + 8, 2, entries);
  PutLe(data + *eocd + 10, 2, entries);
  PutLe(data + *eocd + 12, 4, static_cast<uint32_t>(*eocd - start));
  PutLe(data + *eocd + 16, 4, static_cast<uint32_t>(start));
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  const std::optional<size_t> eocd =
      FindEocd(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!eocd || seed % 10 == 0) return LLVMFuzzerMutate(data, size, max_size);
  const size_t start = DirectoryStart(data, *eocd);
  if (start >= max_size) return LLVMFuzzerMutate(data, size, max_size);
  const size_t new_size = start + LLVMFuzzerMutate(data + start, size - start, max_size - start);
  if (seed % 4 != 0) RepairEocd(data, new_size, start);
  return new_size;
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)convgate::io::ParseNpz(bytes, "fuzz.npz");
  const convgate::fuzz::MemoryFile file(bytes);
  // ReadNpz maps the file and finds stored members through its own directory parser
  // (io/zip_directory.cc), which must agree with libzip or step aside.
  (void)convgate::io::ReadNpz(file.path());
  convgate::Result<convgate::io::SniffedFile> sniffed = convgate::io::SniffFile(file.path());
  if (!sniffed.ok()) return 0;
  // ReadZipMember serves `inspect` (a PyTorch archive's data.pkl and code). Inspect caps a member
  // at 64 MiB (inspect_formats.cc); 1 MiB here keeps a forged size from costing every run 64 MiB.
  for (size_t member_idx = 0; member_idx < sniffed->members.size() && member_idx < 4;
       ++member_idx) {
    (void)convgate::io::ReadZipMember(file.path(), sniffed->members[member_idx].name, 1 << 20);
  }
  return 0;
}
