// A main() for a fuzz target built without libFuzzer (gcc, the normal build): it runs the target's
// LLVMFuzzerTestOneInput once on every file it is given, so ctest replays the committed corpus and
// regression inputs on every build. A crash, a sanitizer report (in the asan build) or a
// __builtin_trap in the target ends the process, which is what fails the test.
//
//   <target>_fuzz_replay DIR_OR_FILE...
//
// Folders are read non-recursively, files in name order. A folder that does not exist is skipped
// (fuzz/regressions/<target>/ exists only once the target has had a crash); replaying no input at
// all fails, so a mistyped corpus path cannot pass as an empty one.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Optional in a target, as in libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> InputsOf(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {path};
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
    if (entry.is_regular_file(ec)) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool ReadAll(const fs::path& path, std::string& bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  const auto start = std::chrono::steady_clock::now();
  int replayed = 0;
  for (int arg_idx = 1; arg_idx < argc; ++arg_idx) {
    const fs::path root = argv[arg_idx];
    std::error_code ec;
    if (!fs::exists(root, ec)) {
      std::printf("%s: absent, skipped\n", root.c_str());
      continue;
    }
    for (const fs::path& input : InputsOf(root)) {
      std::string bytes;
      if (!ReadAll(input, bytes)) {
        std::fprintf(stderr, "cannot read %s\n", input.c_str());
        return 1;
      }
      // Printed before running, so the log names the input that crashed.
      std::printf("%s (%zu bytes)\n", input.c_str(), bytes.size());
      std::fflush(stdout);
      // A copy of exactly `size` bytes on the heap, so ASan sees a read past the end.
      std::vector<uint8_t> data(bytes.begin(), bytes.end());
      LLVMFuzzerTestOneInput(data.data(), data.size());
      ++replayed;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (replayed == 0) {
    std::fprintf(stderr, "no inputs found: a corpus folder is missing or empty\n");
    return 1;
  }
  std::printf("replayed %d inputs in %.2f s, no crash\n", replayed, seconds);
  return 0;
}
