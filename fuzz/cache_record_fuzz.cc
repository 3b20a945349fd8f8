// Fuzz target for the conversion cache's record (convert/cache_record.cc): record.json in a
// cache folder that other users or a crashed convgate may have written. A record that reads must
// write back to a record that reads the same.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "convert/cache_internal.h"

namespace {

// One folder per process for the record file: ReadRecord takes the entry's folder. Removed when
// the process exits, so replaying the corpus in every test run leaves nothing in /tmp.
class EntryFolder {
 public:
  EntryFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "cache_record_fuzz.XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~EntryFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

const std::filesystem::path& EntryDir() {
  static const EntryFolder folder;
  return folder.path();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path record = EntryDir() / "record.json";
  std::ofstream(record, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  convgate::Result<convgate::convert::CachedConversion> read =
      convgate::convert::ReadRecord(EntryDir());
  if (!read.ok()) return 0;
  const std::string written = convgate::convert::RecordToJson(*read);
  std::ofstream(record, std::ios::binary | std::ios::trunc) << written;
  convgate::Result<convgate::convert::CachedConversion> reread =
      convgate::convert::ReadRecord(EntryDir());
  if (!reread.ok() || convgate::convert::RecordToJson(*reread) != written) {
    std::fprintf(stderr, "a record convgate wrote does not read back the same:\n%s\n",
                 written.c_str());
    std::abort();
  }
  return 0;
}
