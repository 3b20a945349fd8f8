// Issue 10's disk findings on the real binary: atomic writes never follow a symlink planted in a
// shared folder (finding 5), a cache entry in use is never pruned (finding 8), and a read-only or
// full cache never fails a conversion that can run without it, and ORT's optimized model of a
// model with external data keeps its weights beside it (finding 9).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;
using testing::StartedProcess;

const std::string kTinyCnn = (fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx").string();
const std::string kHang = (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/hang.py").string();
const std::string kFakeConverter =
    (fs::path(CONVGATE_SOURCE_DIR) / "tests/fixtures/fake_converter.py").string();
constexpr double kStartSeconds = 60.0;

class DiskCliTest : public testing::CliTest {
 protected:
  void SetUp() override {
    testing::CliTest::SetUp();
    ::setenv("CONVGATE_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    ::unsetenv("CONVGATE_CACHE_MAX_BYTES");
    ::unsetenv("CONVGATE_CACHE_MIN_AGE_SECONDS");
  }
  void TearDown() override {
    ::unsetenv("CONVGATE_CACHE_DIR");
    testing::CliTest::TearDown();
  }

  // Starts convgate through a shell that waits for the file GO and then execs it, so convgate's
  // pid (the shell's: exec keeps it) is known before convgate runs.
  StartedProcess StartWhenReleased(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/bin/sh", "-c",
        "while [ ! -e '" + Path("GO") + "' ]; do sleep 0.02; done; exec \"$0\" \"$@\"",
        Binary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::StartProcess(argv);
  }
  void Release() { std::ofstream(Path("GO")) << "go"; }

  // Plants "<path>.tmp-<pid>" -> the victim file, the name convgate's writers used to open with
  // O_CREAT | O_TRUNC.
  void Plant(const std::string& path, pid_t pid) {
    fs::create_symlink(Path("victim"), path + ".tmp-" + std::to_string(pid));
  }
  // Runs convgate in a private mount namespace after `setup` (shell commands run there first, e.g.
  // mounting a tmpfs over the cache), so a read-only or full file system can be made, even as
  // root, without touching the machine's own mounts.
  ProcessResult ConvgateInNamespace(const std::string& setup, std::vector<std::string> args) {
    std::vector<std::string> argv = {
        "/usr/bin/unshare", "-m", "/bin/sh", "-c", setup + " && exec \"$0\" \"$@\"",
        Binary().string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunProcess(argv);
  }
  static bool CanUnshare() {
    return fs::exists("/usr/bin/unshare") &&
           testing::RunProcess({"/usr/bin/unshare", "-m", "/bin/true"}).exit_code == 0;
  }
  std::string Cache() const { return Path("cache"); }
  // The conversion record `convert --json` printed.
  static json Record(const ProcessResult& r) { return json::parse(r.out, nullptr, false); }
  static std::string Notes(const json& record) {
    return record.is_object() ? record["notes"].dump() : "(no record)";
  }
  std::vector<std::string> TempEntries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_ / "tmp")) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  std::string Victim() const {
    Result<std::string> contents = ReadFile(Path("victim"));
    return contents.ok() ? *contents : "(missing)";
  }
};

TEST_F(DiskCliTest, WritersNeverFollowASymlinkPlantedInASharedFolder) {
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "precious").ok());
  fs::create_directories(Path("shared"));
  StartedProcess compare =
      StartWhenReleased({"compare", kTinyCnn, kTinyCnn, "--out", Path("shared"), "--save-inputs",
                         Path("shared/in.npz"), "--save-outputs", Path("shared/ref.npz")});
  for (const char* name : {"report.json", "verify_result.json", "junit.xml", "in.npz", "ref.npz"}) {
    Plant(Path("shared/") + name, compare.pid);
  }
  StartedProcess convert =
      StartWhenReleased({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("shared/model.onnx")});
  Plant(Path("shared/model.onnx"), convert.pid);
  Release();
  ProcessResult compared = testing::WaitProcess(compare);
  ProcessResult converted = testing::WaitProcess(convert);
  EXPECT_EQ(compared.exit_code, 0) << Describe(compared);
  EXPECT_EQ(converted.exit_code, 0) << Describe(converted);
  EXPECT_EQ(Victim(), "precious");
  std::ifstream report(Path("shared/report.json"));
  EXPECT_TRUE(json::parse(report, nullptr, false).is_object());
  for (const char* written : {"in.npz", "ref.npz", "model.onnx"}) {
    ProcessResult inspect = Convgate({"inspect", Path("shared/") + written});
    EXPECT_EQ(inspect.exit_code, 0) << written << ": " << Describe(inspect);
  }
}

// Finding 8: `verify` without -o compares the cache entry itself; a `cache prune` run meanwhile
// (another process) must leave that entry alone, and say so.
TEST_F(DiskCliTest, PruneLeavesTheEntryAVerifyIsUsingAndSaysSo) {
  const std::string pid_file = Path("runner.pid");
  StartedProcess verify = testing::StartProcess(
      {Binary().string(), "verify", kTinyCnn, "--to", "opset:17", "--target-exec",
       "/usr/bin/python3 '" + kHang + "' '" + pid_file + "' {model} {outputs}", "--exec-timeout",
       "0"});
  ASSERT_GT(verify.pid, 0);
  ASSERT_TRUE(testing::WaitFor([&] { return testing::ReadPidFile(pid_file) > 0; }, kStartSeconds))
      << "the target never started running";
  ProcessResult pruned = Convgate({"cache", "prune", "--max-bytes", "0", "--min-age", "0"});
  EXPECT_EQ(pruned.exit_code, 0) << Describe(pruned);
  EXPECT_NE(pruned.out.find("removed 0 of 1 entries"), std::string::npos) << pruned.out;
  EXPECT_NE(pruned.out.find("in use by another convgate (locked)"), std::string::npos)
      << pruned.out;
  ProcessResult listed = Convgate({"cache", "ls", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << Describe(listed);
  EXPECT_EQ(json::parse(listed.out)["entries"].size(), 1u) << listed.out;
  ::kill(verify.pid, SIGINT);
  ProcessResult verified = testing::WaitProcess(verify);
  EXPECT_EQ(verified.exit_code, 130) << Describe(verified);
  // Nobody uses it any more: now it goes.
  ProcessResult again =
      Convgate({"cache", "prune", "--max-bytes", "0", "--min-age", "0", "--json"});
  ASSERT_EQ(again.exit_code, 0) << Describe(again);
  const json result = json::parse(again.out);
  EXPECT_EQ(result["removed"].size(), 1u) << again.out;
  EXPECT_TRUE(result["in_use"].empty()) << again.out;
}

// Finding 9: a cache that cannot be used never fails a conversion that runs without it. Here the
// cache's folder cannot be created at all (its parent is a regular file: refused even for root).
TEST_F(DiskCliTest, ACacheThatCannotBeCreatedConvertsUncachedAndSaysWhy) {
  std::ofstream(Path("not-a-folder")) << "file";
  ::setenv("CONVGATE_CACHE_DIR", Path("not-a-folder/cache").c_str(), 1);
  ProcessResult r =
      Convgate({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("out.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json record = Record(r);
  EXPECT_NE(Notes(record).find("not cached: cannot create the cache directory"), std::string::npos)
      << Notes(record);
  EXPECT_TRUE(record["cache"]["path"].is_null()) << r.out;
  EXPECT_EQ(Convgate({"compare", kTinyCnn, Path("out.onnx")}).exit_code, 0);
  // verify without -o compares the uncached output where it was made, then removes it.
  fs::create_directories(dir_ / "tmp");
  ::setenv("TMPDIR", (dir_ / "tmp").c_str(), 1);
  ProcessResult verify = Convgate({"verify", kTinyCnn, "--to", "fp16", "--atol", "0.01", "--rtol",
                                   "0.01", "--out", Path("results")});
  ::unsetenv("TMPDIR");
  EXPECT_EQ(verify.exit_code, 0) << Describe(verify);
  std::ifstream in(Path("results/report.json"));
  const json report = json::parse(in, nullptr, false);
  EXPECT_NE(report.dump().find("not cached: cannot create the cache directory"), std::string::npos);
  EXPECT_TRUE(TempEntries().empty());
}

TEST_F(DiskCliTest, AReadOnlyCacheServesHitsAndConvertsMissesUncached) {
  if (!CanUnshare()) GTEST_SKIP() << "unshare -m is not permitted here: no private mounts";
  ProcessResult first =
      Convgate({"convert", kTinyCnn, "--to", "opset:17", "-o", Path("first.onnx")});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  // The cache, remounted read-only: a real EROFS, which root cannot write through either.
  const std::string read_only = "mount --bind '" + Cache() + "' '" + Cache() +
                                "' && mount -o remount,bind,ro '" + Cache() + "'";
  ProcessResult hit = ConvgateInNamespace(
      read_only, {"convert", kTinyCnn, "--to", "opset:17", "-o", Path("hit.onnx"), "--json"});
  ASSERT_EQ(hit.exit_code, 0) << Describe(hit);
  EXPECT_EQ(Record(hit)["cache"]["hit"], true) << hit.out;
  ProcessResult miss = ConvgateInNamespace(
      read_only, {"convert", kTinyCnn, "--to", "fp16", "-o", Path("miss.onnx"), "--json"});
  ASSERT_EQ(miss.exit_code, 0) << Describe(miss);
  EXPECT_EQ(Record(miss)["cache"]["hit"], false);
  EXPECT_NE(Notes(Record(miss)).find("Read-only file system"), std::string::npos)
      << Notes(Record(miss));
  ProcessResult verify = ConvgateInNamespace(
      read_only, {"verify", kTinyCnn, "--to", "fp16", "--atol", "0.01", "--rtol", "0.01"});
  EXPECT_EQ(verify.exit_code, 0) << Describe(verify);
}

TEST_F(DiskCliTest, AFullCacheConvertsUncachedAndSaysWhy) {
  if (!CanUnshare()) GTEST_SKIP() << "unshare -m is not permitted here: no private mounts";
  fs::create_directories(Cache());
  // A 1 MiB tmpfs filled to the last block.
  const std::string full = "mount -t tmpfs -o size=1m tmpfs '" + Cache() +
                           "' && (dd if=/dev/zero of='" + Cache() +
                           "/fill' bs=64k 2>/dev/null || true)";
  ProcessResult r = ConvgateInNamespace(
      full, {"convert", kTinyCnn, "--to", "opset:17", "-o", Path("out.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(Notes(Record(r)).find("not cached: the cache's file system"), std::string::npos)
      << Notes(Record(r));
  EXPECT_EQ(Convgate({"compare", kTinyCnn, Path("out.onnx")}).exit_code, 0);
}

TEST_F(DiskCliTest, ACacheThatFillsUpDuringAConversionRetriesItOutside) {
  if (!CanUnshare()) GTEST_SKIP() << "unshare -m is not permitted here: no private mounts";
  fs::create_directories(Cache());
  // Room for the source and the headroom, but not for the 4 MiB the converter writes beside its
  // output: it fails with ENOSPC in the cache, and succeeds outside it.
  const std::string small = "mount -t tmpfs -o size=2m tmpfs '" + Cache() + "'";
  const std::string converter = "/usr/bin/python3 '" + kFakeConverter + "' padded {src} {out}";
  ProcessResult r = ConvgateInNamespace(
      small, {"convert", kTinyCnn, "--converter", converter, "-o", Path("out.onnx"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const json record = Record(r);
  EXPECT_NE(Notes(record).find("not cached: the cache's file system"), std::string::npos)
      << Notes(record);
  EXPECT_NE(Notes(record).find("(the attempt there exited with code 1)"), std::string::npos)
      << Notes(record);
  EXPECT_EQ(record["attempts"], 1) << r.out;
  EXPECT_EQ(Convgate({"compare", kTinyCnn, Path("out.onnx")}).exit_code, 0);
}

// A 1x64 @ 64x64 MatMul whose weights (16 KiB, over ORT's 1 KiB threshold for external
// initializers) live in `dir`/weights.bin, as a model too large for one protobuf keeps them.
void WriteExternalDataModel(const fs::path& dir) {
  onnx::ModelProto model = testing::ParseOnnxText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    external (float[1,64] x) => (float[1,64] y) { y = MatMul(x, w) }
  )");
  constexpr int kSide = 64;
  std::vector<float> weights(kSide * kSide);
  for (size_t idx = 0; idx < weights.size(); ++idx) weights[idx] = 0.125f * (idx % 7) - 0.375f;
  onnx::TensorProto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kSide);
  w->add_dims(kSide);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  const std::string length = std::to_string(weights.size() * sizeof(float));
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                   {"offset", "0"},
                                   {"length", length}}) {
    onnx::StringStringEntryProto* entry = w->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  fs::create_directories(dir);
  std::ofstream(dir / "weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(weights.data()),
             static_cast<std::streamsize>(weights.size() * sizeof(float)));
  testing::WriteModel(model, dir / "model.onnx");
}

// Finding 9: ORT wrote an optimized model naming the source's weights.bin relative to a folder
// it is not in (and no data of its own), so every such conversion failed ONNX's checker, exit 3.
TEST_F(DiskCliTest, OrtOptimizedWritesTheExternalDataBesideTheOutput) {
  WriteExternalDataModel(dir_ / "src");
  const std::string source = Path("src/model.onnx");
  ProcessResult first = Convgate(
      {"convert", source, "--to", "ort-optimized:basic", "-o", Path("out/opt.onnx"), "--json"});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  // A second output in the same folder (a cache hit) gets a data file of its own name.
  ProcessResult second = Convgate(
      {"convert", source, "--to", "ort-optimized:basic", "-o", Path("out/second.onnx"), "--json"});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_EQ(Record(second)["cache"]["hit"], true) << second.out;
  EXPECT_TRUE(fs::exists(Path("out/opt.onnx.data")));
  EXPECT_TRUE(fs::exists(Path("out/second.onnx.data")));
  EXPECT_NE(Notes(Record(first)).find("opt.onnx.data (external data)"), std::string::npos)
      << Notes(Record(first));
  // The outputs stand on their own: ONNX Runtime loads each, with its data, and it computes what
  // the source does.
  fs::remove_all(Cache());
  for (const char* output : {"out/opt.onnx", "out/second.onnx"}) {
    ProcessResult compared = Convgate({"compare", source, Path(output)});
    EXPECT_EQ(compared.exit_code, 0) << output << ": " << Describe(compared);
  }
  // verify without -o reads the optimized model in the cache entry, its data beside it.
  ProcessResult verified = Convgate({"verify", source, "--to", "ort-optimized:extended"});
  EXPECT_EQ(verified.exit_code, 0) << Describe(verified);
}

// The built-in conversions and transform read a model whose weights are in a data file, and
// write their own beside the output; each output loads with its data and passes the gate.
TEST_F(DiskCliTest, BuiltinConversionsAndTransformKeepExternalData) {
  WriteExternalDataModel(dir_ / "src");
  const std::string source = Path("src/model.onnx");
  for (const std::string kind : {"fp16", "opset:16", "opset:17"}) {
    const std::string out =
        Path("out/" + kind.substr(0, kind.find(':')) + kind.substr(kind.find(':') + 1) + ".onnx");
    ProcessResult verified = Convgate({"verify", source, "--to", kind, "-o", out});
    ASSERT_EQ(verified.exit_code, 0) << kind << ": " << Describe(verified);
    EXPECT_TRUE(fs::exists(out + ".data")) << kind;
    EXPECT_NE(verified.out.find("VERIFY PASSED"), std::string::npos) << verified.out;
  }
  ProcessResult transformed =
      Convgate({"transform", source, "--pass", "div_to_mul,eliminate_identity", "-o",
                Path("out/t.onnx"), "--validate"});
  ASSERT_EQ(transformed.exit_code, 0) << Describe(transformed);
  EXPECT_TRUE(fs::exists(Path("out/t.onnx.data")));
}

// A data location outside the model's folder is refused before anything is read, naming it.
TEST_F(DiskCliTest, AnExternalDataLocationOutsideTheFolderIsRefused) {
  WriteExternalDataModel(dir_ / "src");
  std::ifstream in(Path("src/model.onnx"), std::ios::binary);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromIstream(&in));
  model.mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value(
      "../../../../dev/zero");
  testing::WriteModel(model, dir_ / "src" / "hostile.onnx");
  ProcessResult r =
      Convgate({"convert", Path("src/hostile.onnx"), "--to", "fp16", "-o", Path("out/h.onnx")});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("'../../../../dev/zero' is not a file in the model's folder"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Path("out/h.onnx")));
}

}  // namespace
}  // namespace convgate
