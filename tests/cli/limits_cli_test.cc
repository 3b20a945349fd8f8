// Issue 10's limits on the real binary: zip bombs, models declaring huge inputs, runs that never
// end, and FIFOs or devices given as files each fail with exit code 3 and a message naming the file
// (or member, or input) and the limit, instead of exhausting memory, hanging or exiting 4. Every
// hostile file is made here, in code; none is large on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/onnx_test_util.h"
#include "testing/cli_fixture.h"
#include "testing/hostile_files.h"

namespace convgate::testing {
namespace {

namespace fs = std::filesystem;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();

// 5 GiB of float32 zeros: 5 MB deflated.
constexpr uint64_t kBombElements = (uint64_t{5} << 30) / 4;

// The 70-byte model of the issue: one float32[1,1024,1024,1024] input (4 GiB), the same output.
constexpr char kHugeInput[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1,1024,1024,1024] x) => (float[1,1024,1024,1024] y) { y = Identity(x) }
)";
// 4 TiB of input: more than any machine the default limit derives from.
constexpr char kHugerInput[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1024,1024,1024,1024] x) => (float[1024,1024,1024,1024] y) { y = Identity(x) }
)";
// A symbolic batch that --dim makes huge.
constexpr char kBatched[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[batch,1024,1024] x) => (float[batch,1024,1024] y) { y = Identity(x) }
)";

class LimitsCliTest : public CliTest {
 protected:
  // convgate under `timeout`, so a regression that hangs fails the test (exit 124) instead of
  // stalling the suite; `prefix` runs before it (prlimit for a memory limit).
  ProcessResult Bounded(std::vector<std::string> args, std::vector<std::string> prefix = {}) {
    std::vector<std::string> argv = std::move(prefix);
    argv.insert(argv.end(), {"/usr/bin/timeout", "120", Binary().string()});
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    EXPECT_EQ(result.signal, 0) << Describe(result);
    EXPECT_NE(result.exit_code, 124) << "timed out: " << Describe(result);
    return result;
  }

  std::string WriteBomb(const std::string& file) {
    std::ofstream(Path(file), std::ios::binary) << ZeroBombNpz("x", kBombElements);
    return Path(file);
  }

  std::string Model(const std::string& file, const char* text) {
    WriteModel(ParseOnnxText(text), Path(file));
    return Path(file);
  }

  std::string MakeFifo(const std::string& file) {
    EXPECT_EQ(::mkfifo(Path(file).c_str(), 0600), 0) << Path(file);
    return Path(file);
  }
};

void ExpectCannotRun(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find(message), std::string::npos) << Describe(r);
}

// Finding 2: an npz member's declared size is refused before anything is inflated, wherever an
// .npz is read: inspect, saved outputs, --load-inputs and an exec runner's outputs.npz.
TEST_F(LimitsCliTest, ZipBombIsRefusedByItsDeclaredSizeNamingTheMember) {
  const std::string bomb = WriteBomb("bomb.npz");
  const std::string refused =
      "bomb.npz entry 'x.npy': declares 5.0 GiB uncompressed, over the "
      "limit of 1.0 GiB (--max-tensor-bytes)";
  ExpectCannotRun(Bounded({"inspect", bomb, "--max-tensor-bytes", "1GiB"}), refused);
  ExpectCannotRun(Bounded({"compare", bomb, bomb, "--max-tensor-bytes", "1GiB"}), refused);
  ExpectCannotRun(Bounded({"run", kTinyCnn, "--load-inputs", bomb, "--max-tensor-bytes", "1GiB"}),
                  refused);
  ExpectCannotRun(Bounded({"run", kTinyCnn, "--exec", "/bin/cp " + bomb + " {outputs}",
                           "--max-tensor-bytes", "1GiB"}),
                  "outputs.npz entry 'x.npy': declares 5.0 GiB uncompressed");
}

// Saved outputs on both sides are held at once: two archives each under the limits are refused
// together, by their declared sizes, before either is inflated.
TEST_F(LimitsCliTest, SavedOutputsOfBothSidesAreHeldToTheRunLimitTogether) {
  const uint64_t elements = (uint64_t{96} << 20) / 4;  // 96 MiB of zeros each
  std::ofstream(Path("a.npz"), std::ios::binary) << ZeroBombNpz("y", elements);
  std::ofstream(Path("b.npz"), std::ios::binary) << ZeroBombNpz("y", elements);
  ExpectCannotRun(Bounded({"compare", Path("a.npz"), Path("b.npz"), "--max-run-bytes", "128MiB"}),
                  "the saved outputs of both sides declare 192.0 MiB in all (source " +
                      Path("a.npz") + ": 96.0 MiB, target " + Path("b.npz") +
                      ": 96.0 MiB), held at once, over the limit of 128.0 MiB (--max-run-bytes)");
  // Under a limit that holds both, they are read and compared.
  ProcessResult both =
      Bounded({"compare", Path("a.npz"), Path("b.npz"), "--max-run-bytes", "256MiB"});
  EXPECT_EQ(both.exit_code, 0) << Describe(both);
}

// Under a memory limit the default follows it (half of what the process may use), so the same
// bomb is refused without any flag: before, it was bad_alloc and exit 4.
TEST_F(LimitsCliTest, ZipBombUnderAMemoryLimitIsRefusedByDefault) {
  const std::string bomb = WriteBomb("bomb.npz");
  ProcessResult r = Bounded({"inspect", bomb}, {"/usr/bin/prlimit", "--as=4294967296", "--"});
  ExpectCannotRun(r,
                  "bomb.npz entry 'x.npy': declares 5.0 GiB uncompressed, over the limit of 2.0 "
                  "GiB (--max-tensor-bytes)");
}

// Finding 3: what a run will hold is known from the declared shapes before anything is
// allocated.
TEST_F(LimitsCliTest, AModelDeclaringAHugeInputIsRefusedBeforeAllocating) {
  const std::string model = Model("huge.onnx", kHugeInput);
  EXPECT_LT(fs::file_size(model), 128u);
  const std::string figures =
      "this run needs 8.0 GiB of tensors: its inputs 4.0 GiB (input 'x' float32[1, 1024, 1024, "
      "1024]) and its outputs 4.0 GiB (largest output 'y' float32[1, 1024, 1024, 1024]), over "
      "the limit of 6.0 GiB (--max-run-bytes;";
  ExpectCannotRun(Bounded({"run", model, "--max-run-bytes", "6GiB"}), figures);
  ExpectCannotRun(Bounded({"compare", model, model, "--max-run-bytes", "6GiB"}),
                  "this run needs 12.0 GiB of tensors");
  // The default (half of usable memory) refuses what no machine holds.
  ExpectCannotRun(Bounded({"run", Model("huger.onnx", kHugerInput)}),
                  "its inputs 4.0 TiB (input 'x' float32[1024, 1024, 1024, 1024])");
  ExpectCannotRun(Bounded({"run", Model("batched.onnx", kBatched), "--dim", "batch=100000",
                           "--max-run-bytes", "1GiB"}),
                  "its inputs 390.6 GiB (input 'x' float32[100000, 1024, 1024])");
}

TEST_F(LimitsCliTest, AnEndlessRunIsStoppedByTheRunTimeout) {
  const std::string model = Model("loop.onnx", kEndlessLoop);
  const auto start = std::chrono::steady_clock::now();
  ProcessResult r = Bounded({"run", model, "--run-timeout", "2"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ExpectCannotRun(r, "convgate: error (run): sample 0: " + model +
                         ": timed out after 2 s (--run-timeout); ONNX Runtime stopped the run");
  EXPECT_LT(seconds, 60.0);
  ExpectCannotRun(Bounded({"compare", model, model, "--run-timeout", "2"}),
                  "convgate: error (run): source sample 0: " + model + ": timed out after 2 s");
}

// Finding 6: a FIFO, /dev/zero or a link to it, given where a file is read, is named and refused.
TEST_F(LimitsCliTest, FifosAndDevicesAreRefusedByName) {
  const std::string fifo_model = MakeFifo("model.onnx");
  const std::string fifo_npz = MakeFifo("outputs.npz");
  const std::string fifo_npy = MakeFifo("inputs.npy");
  const std::string is_fifo = " is a FIFO, not a regular file";
  ExpectCannotRun(Bounded({"inspect", fifo_model}), fifo_model + is_fifo);
  ExpectCannotRun(Bounded({"run", fifo_model}), fifo_model + is_fifo);
  ExpectCannotRun(Bounded({"compare", fifo_npz, kTinyCnn}), fifo_npz + is_fifo);
  ExpectCannotRun(Bounded({"run", kTinyCnn, "--load-inputs", fifo_npy}), fifo_npy + is_fifo);
  ExpectCannotRun(
      Bounded({"convert", fifo_model, "--to", "fp16", "-o", Path("out.onnx"), "--no-cache"}),
      fifo_model + is_fifo);
  ExpectCannotRun(Bounded({"inspect", "/dev/zero"}),
                  "/dev/zero is a character device, not a regular file");
  fs::create_symlink("/dev/urandom", Path("weights.onnx"));
  ExpectCannotRun(
      Bounded({"run", Path("weights.onnx")}),
      Path("weights.onnx") + " (a link to /dev/urandom) is a character device, not a regular file");
}

TEST_F(LimitsCliTest, CacheListsAFifoRecordAsUnreadable) {
  fs::create_directories(Path("cache/conversions/0123abcd"));
  MakeFifo("cache/conversions/0123abcd/record.json");
  ProcessResult ls = Bounded({"cache", "ls", "--cache-dir", Path("cache")});
  EXPECT_EQ(ls.exit_code, 0) << Describe(ls);
  EXPECT_NE(ls.out.find("(unreadable record)"), std::string::npos) << Describe(ls);
  ProcessResult prune =
      Bounded({"cache", "prune", "--cache-dir", Path("cache"), "--max-bytes", "0"});
  EXPECT_EQ(prune.exit_code, 0) << Describe(prune);
}

}  // namespace
}  // namespace convgate::testing
