#include "convgate/batch/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "convgate/batch/preflight.h"

namespace convgate::batch {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = "/data/zoo";

Manifest Parse(const std::string& text, const std::string& name) {
  Result<Manifest> manifest = ParseManifest(text, kDir / name);
  EXPECT_TRUE(manifest.ok()) << manifest.status().ToString();
  return manifest.ok() ? *manifest : Manifest{};
}

// The error message; the test fails if the manifest parsed.
std::string ErrorOf(const std::string& text, const std::string& name) {
  Result<Manifest> manifest = ParseManifest(text, kDir / name);
  EXPECT_FALSE(manifest.ok()) << "parsed:\n" << text;
  if (manifest.ok()) return "";
  EXPECT_EQ(manifest.status().code(), StatusCode::kInvalidArgument);
  return manifest.status().message();
}

using ::testing::HasSubstr;

TEST(ManifestTest, JsonListOfTheReferencePipeline) {
  const Manifest manifest = Parse(R"([
    {"model_id": "bert-base-uncased", "file_path": "bert/model.onnx", "model_type": "bert"},
    {"model_id": "google/vit-base-patch16-224", "file_path": "/abs/vit.onnx"}
  ])",
                                  "batch_models.json");
  ASSERT_EQ(manifest.entries.size(), 2u);
  EXPECT_EQ(manifest.entries[0].id, "bert-base-uncased");
  // Not beside the manifest: the file of the hub repository model_id.
  EXPECT_EQ(manifest.entries[0].source, "hf://bert-base-uncased@main/bert/model.onnx");
  EXPECT_EQ(manifest.entries[0].declared_model_type, "bert");
  EXPECT_EQ(manifest.entries[0].command, "run");
  EXPECT_EQ(manifest.entries[0].line, 2);
  EXPECT_EQ(manifest.entries[1].id, "google_vit-base-patch16-224");
  EXPECT_EQ(manifest.entries[1].model_id, "google/vit-base-patch16-224");
  EXPECT_EQ(manifest.entries[1].source, "/abs/vit.onnx");
  EXPECT_EQ(manifest.entries[1].line, 3);
}

TEST(ManifestTest, TextListSkipsCommentsAndBlankLines) {
  const Manifest manifest =
      Parse("# the zoo\nmodels/a.onnx\n\n  b.onnx  # trailing\n", "models.txt");
  ASSERT_EQ(manifest.entries.size(), 2u);
  EXPECT_EQ(manifest.entries[0].id, "models_a");
  EXPECT_EQ(manifest.entries[0].line, 2);
  EXPECT_EQ(manifest.entries[1].id, "b");
  EXPECT_EQ(manifest.entries[1].source, kDir / "b.onnx");
  EXPECT_EQ(manifest.entries[1].line, 4);
  EXPECT_EQ(manifest.entries[1].Args(),
            (std::vector<std::string>{"run", (kDir / "b.onnx").string()}));
}

TEST(ManifestTest, YamlEntriesBecomeVerifyCommandLines) {
  const Manifest manifest = Parse(R"(
defaults:
  inputs:
    dims: {batch: 2}
  timeout: 90s
models:
  - id: cnn-fp16
    source: tinycnn.onnx
    to: fp16
    params: {keep_io_types: 1}
    policy: {atol: 1e-3, rtol: {logits: 0.01}}
    per_node: true
  - source: sub/tinycnn.onnx
    target: converted.onnx
    inputs: {shapes: ["image:[1,3,16,16]"], load: in.npz}
    policy: policies/p.yaml
    timeout: 5
  - source: a.onnx
    target: b.onnx
    command: compare
)",
                                  "fleet.yaml");
  ASSERT_EQ(manifest.entries.size(), 3u);
  const ManifestEntry& first = manifest.entries[0];
  EXPECT_EQ(first.id, "cnn-fp16");
  EXPECT_EQ(first.line, 7);
  EXPECT_EQ(first.timeout_seconds, 90);
  EXPECT_EQ(first.Conversion(), "to:fp16");
  EXPECT_EQ(first.Args(),
            (std::vector<std::string>{"verify", (kDir / "tinycnn.onnx").string(), "--to", "fp16",
                                      "--param", "keep_io_types=1", "--dim", "batch=2", "--atol",
                                      "1e-3", "--rtol", "logits:0.01", "--per-node"}));
  const ManifestEntry& second = manifest.entries[1];
  EXPECT_EQ(second.id, "sub_tinycnn");
  EXPECT_EQ(second.timeout_seconds, 5);
  EXPECT_EQ(second.Args(),
            (std::vector<std::string>{
                "verify", (kDir / "sub/tinycnn.onnx").string(), "--target",
                (kDir / "converted.onnx").string(), "--shape", "image:[1,3,16,16]", "--load-inputs",
                (kDir / "in.npz").string(), "--policy", (kDir / "policies/p.yaml").string()}));
  EXPECT_EQ(second.extra_files.size(), 2u);
  EXPECT_EQ(manifest.entries[2].Args(),
            (std::vector<std::string>{"compare", (kDir / "a.onnx").string(),
                                      (kDir / "b.onnx").string(), "--dim", "batch=2"}));
}

TEST(ManifestTest, ConverterEntryVerifiesThroughThatConverter) {
  const Manifest manifest = Parse(
      "models:\n  - id: c\n    source: a.onnx\n    converter: my-conv {src} {out}\n", "m.yaml");
  ASSERT_EQ(manifest.entries.size(), 1u);
  const ManifestEntry& entry = manifest.entries[0];
  EXPECT_EQ(entry.command, "verify");
  EXPECT_EQ(entry.Args(), (std::vector<std::string>{"verify", (kDir / "a.onnx").string(),
                                                    "--converter", "my-conv {src} {out}"}));
  EXPECT_EQ(entry.Conversion(), "converter:my-conv {src} {out}");
}

TEST(ManifestTest, EveryErrorNamesTheFileLineAndEntry) {
  struct Case {
    std::string name;
    std::string text;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"bad.json", "[{\"model_id\": \"a\",\n \"file_path\": }]", "bad.json:2: not valid JSON"},
      {"bad.yaml", "models:\n  - source: [a\n", "bad.yaml:"},
      {"m.json", "[{\"model_id\": \"a\", \"file_path\": \"a.onnx\", \"size\": 3}]",
       "m.json:1: entry 'a': unknown key 'size'"},
      {"m.json", "[{\"model_id\": \"a\"}]", "entry 'a': has no file_path"},
      {"m.json", "{\"model_id\": \"a\"}", "not a JSON list"},
      {"m.yaml", "models:\n  - id: a\n    source: a.onnx\n    tolerance: 1\n",
       "m.yaml:4: entry 'a': unknown key 'tolerance'"},
      {"m.yaml", "models:\n  - id: a\n    to: fp16\n", "m.yaml:2: entry 'a': has no source"},
      {"m.yaml", "models:\n  - source: a.onnx\n  - source: b.onnx\n  - source: a.onnx\n",
       "m.yaml:4: entry 'a': duplicate id (first at line 2)"},
      {"m.txt", "a.onnx\nb.onnx\na.onnx\n", "m.txt:3: entry 'a': duplicate id (first at line 1)"},
      {"m.yaml", "models:\n  - source: a.onnx\n    to: fp16\n    target: b.onnx\n",
       "has more than one of to (convert), converter"},
      {"m.yaml", "models:\n  - source: a.onnx\n    converter: x {src} {out}\n    command: run\n",
       "to or converter (a conversion) needs command verify, not run"},
      {"m.yaml", "models:\n  - {}\n", "has no source"},
      {"m.yaml", "models:\n  - source: a.onnx\n    command: compare\n", "compare needs a target"},
      {"m.yaml", "models:\n  - source: a.onnx\n    command: bisect\n",
       "command must be verify, compare or run"},
      {"m.yaml", "models:\n  - source: a.onnx\n    policy: {atol: 1}\n", "atol needs a comparison"},
      {"m.yaml", "models:\n  - source: a.onnx\n    to: fp16\n    inputs: {shape: x}\n",
       "unknown key 'shape' in inputs"},
      {"m.yaml", "models:\n  - source: a.onnx\n    to: fp16\n    policy: {stat: max}\n",
       "unknown key 'stat' in policy"},
      {"m.yaml", "models:\n  - source: a.onnx\n    to: fp16\n    per_node: maybe\n",
       "per_node must be true or false"},
      {"m.yaml", "models:\n  - source: a.onnx\n    to: fp16\n    timeout: soon\n", "timeout:"},
      {"m.yaml", "models:\n  - id: ../up\n    source: a.onnx\n", "names the job's folder"},
      {"m.yaml", "defaults:\n  source: a.onnx\nmodels: []\n", "defaults: unknown key 'source'"},
      {"m.yaml", "model:\n  - source: a.onnx\n", "unknown top-level key 'model'"},
      {"m.yaml", "models: {source: a.onnx}\n", "models is not a list"},
      {"m.yaml", "models:\n  - a.onnx\n", "is not a mapping"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(ErrorOf(c.text, c.name), HasSubstr(c.expected)) << c.text;
  }
}

TEST(ManifestTest, MissingManifestIsNotFound) {
  Result<Manifest> manifest = ReadManifest("/nonexistent/manifest.yaml");
  ASSERT_FALSE(manifest.ok());
  EXPECT_EQ(manifest.status().code(), StatusCode::kNotFound) << manifest.status().ToString();
}

// Shards are balanced (7 entries over 3: 2, 2 and 3, where hash mod 3 gave 1/1/5), cover every
// entry once, and appending two entries moves at most 2 x (4 - 1) of the others.
TEST(ManifestTest, ShardsAreBalancedDeterministicAndNearlyStableWhenEntriesAreAppended) {
  std::string seven;
  for (int model_idx = 0; model_idx < 7; ++model_idx) {
    seven += "m" + std::to_string(model_idx) + ".onnx\n";
  }
  const Manifest small = Parse(seven, "models.txt");
  std::vector<size_t> sizes;
  for (int shard_idx = 0; shard_idx < 3; ++shard_idx) {
    sizes.push_back(SelectShard(small.entries, shard_idx, 3).size());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 2, 3}));

  std::string text;
  for (int model_idx = 0; model_idx < 40; ++model_idx) {
    text += "m" + std::to_string(model_idx) + ".onnx\n";
  }
  const Manifest manifest = Parse(text, "models.txt");
  std::map<std::string, int> shard_of;
  for (int shard_idx = 0; shard_idx < 4; ++shard_idx) {
    const std::vector<ManifestEntry> shard = SelectShard(manifest.entries, shard_idx, 4);
    EXPECT_EQ(shard.size(), 10u) << "shard " << shard_idx;
    EXPECT_EQ(shard.size(), SelectShard(manifest.entries, shard_idx, 4).size());
    for (const ManifestEntry& entry : shard) {
      EXPECT_TRUE(shard_of.emplace(entry.id, shard_idx).second) << entry.id << " twice";
    }
  }
  EXPECT_EQ(shard_of.size(), manifest.entries.size());
  const Manifest longer = Parse(text + "extra1.onnx\nextra2.onnx\n", "models.txt");
  int moved = 0;
  for (int shard_idx = 0; shard_idx < 4; ++shard_idx) {
    for (const ManifestEntry& entry : SelectShard(longer.entries, shard_idx, 4)) {
      if (entry.id.rfind("extra", 0) != 0 && shard_of.at(entry.id) != shard_idx) ++moved;
    }
  }
  EXPECT_LE(moved, 6);
}

TEST(ManifestTest, FnvHashHasItsDefinedValue) {
  // FNV-1a 64 test vectors (Fowler/Noll/Vo): "" and "a".
  EXPECT_EQ(ShardHash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(ShardHash("a"), 0xaf63dc4c8601ec8cull);
}

TEST(ManifestTest, ResumeKeyChangesWithContentModelAndVersion) {
  const Manifest manifest = Parse(
      "models:\n  - {id: a, source: a.onnx, to: fp16}\n  - {id: b, source: a.onnx, to: fp16, "
      "policy: {atol: 1}}\n",
      "m.yaml");
  const ManifestEntry& a = manifest.entries[0];
  const std::string key = EntryKey(a, "sha1", "0.1.0");
  EXPECT_EQ(key, EntryKey(a, "sha1", "0.1.0"));
  EXPECT_NE(key, EntryKey(a, "sha2", "0.1.0"));
  EXPECT_NE(key, EntryKey(a, "sha1", "0.2.0"));
  EXPECT_NE(key, EntryKey(manifest.entries[1], "sha1", "0.1.0"));
  // Same settings under another id: another entry.
  ManifestEntry renamed = a;
  renamed.id = "a2";
  EXPECT_NE(key, EntryKey(renamed, "sha1", "0.1.0"));
}

TEST(PreflightTest, NameHeuristicOfTheReference) {
  EXPECT_EQ(ModelTypeFromName("bert-base-uncased"), "bert");
  EXPECT_EQ(ModelTypeFromName("t5-small"), "t5");
  EXPECT_EQ(ModelTypeFromName("google/vit-base-patch16-224"), "vit");
  EXPECT_EQ(ModelTypeFromName("openai/whisper-tiny"), "whisper");
  EXPECT_EQ(ModelTypeFromName("facebook/wav2vec2-base"), "wav2vec2");
  EXPECT_EQ(ModelTypeFromName("tinycnn"), "");
}

TEST(PreflightTest, MissingAndCorruptFilesAreTheEntrysFailure) {
  const fs::path dir =
      fs::temp_directory_path() / ("convgate_preflight_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "empty.onnx").close();
  std::ofstream(dir / "junk.onnx") << "\x08\x07 not a protobuf at all \xff\xff\xff";
  std::ofstream(dir / "config.json") << R"({"model_type": "bert"})";
  ManifestEntry entry;
  entry.id = "x";
  entry.source = dir / "missing.onnx";
  Preflight missing = CheckEntry(entry);
  EXPECT_EQ(missing.error_category, "missing-file");
  EXPECT_NE(missing.error_text.find("missing.onnx does not exist"), std::string::npos);
  entry.source = dir / "empty.onnx";
  EXPECT_EQ(CheckEntry(entry).error_category, "corrupt-file");
  entry.source = dir / "junk.onnx";
  Preflight junk = CheckEntry(entry);
  EXPECT_EQ(junk.error_category, "corrupt-file");
  EXPECT_EQ(junk.model_sha256.size(), 64u);
  // config.json beside the model decides the type.
  EXPECT_EQ(junk.model_type.type, "bert");
  EXPECT_EQ(junk.model_type.source, "config.json");
  fs::remove_all(dir);
}

// --- models by id (hf://, model_id + file_path + revision) ---

TEST(ManifestTest, HubFilesBecomeHfUris) {
  const Manifest manifest = Parse(R"(
models:
  - model_id: org/bert-tiny
    file_path: onnx/model.onnx
    revision: v1.0
  - source: hf://org/vit/model.onnx
    target: hf://org/vit@refs%2Fpr%2F1/model_fp16.onnx
)",
                                  "m.yaml");
  ASSERT_EQ(manifest.entries.size(), 2u);
  EXPECT_EQ(manifest.entries[0].id, "org_bert-tiny");
  EXPECT_EQ(manifest.entries[0].model_id, "org/bert-tiny");
  EXPECT_EQ(manifest.entries[0].source, "hf://org/bert-tiny@v1.0/onnx/model.onnx");
  EXPECT_EQ(manifest.entries[0].Args(),
            (std::vector<std::string>{"run", "hf://org/bert-tiny@v1.0/onnx/model.onnx"}));
  EXPECT_EQ(manifest.entries[1].id, "org_vit_model");
  EXPECT_EQ(manifest.entries[1].source, "hf://org/vit/model.onnx");  // not under the manifest
  EXPECT_EQ(manifest.entries[1].target, "hf://org/vit@refs%2Fpr%2F1/model_fp16.onnx");

  const Manifest json = Parse(R"([
    {"model_id": "org/m", "file_path": "model.onnx", "revision": "0123abcd"},
    {"model_id": "org/m2", "file_path": "hf://org/m2/model.onnx"}
  ])",
                              "models.json");
  EXPECT_EQ(json.entries[0].source, "hf://org/m@0123abcd/model.onnx");
  EXPECT_EQ(json.entries[1].source, "hf://org/m2/model.onnx");
}

TEST(ManifestTest, HubEntryErrorsNameTheEntry) {
  EXPECT_THAT(ErrorOf("models:\n  - model_id: org/m\n    source: a.onnx\n    file_path: m.onnx\n",
                      "m.yaml"),
              HasSubstr("m.yaml:2: entry #1: has both source and file_path"));
  EXPECT_THAT(ErrorOf("models:\n  - source: a.onnx\n    revision: v1\n", "m.yaml"),
              HasSubstr("revision needs file_path"));
  EXPECT_THAT(ErrorOf("models:\n  - model_id: org--m\n    file_path: m.onnx\n", "m.yaml"),
              HasSubstr("m.yaml:2: entry #1: 'hf://org--m@main/m.onnx'"));
  EXPECT_THAT(
      ErrorOf(R"([{"model_id": "org/m", "file_path": "../m.onnx", "revision": "v1"}])", "m.json"),
      HasSubstr("m.json:1: entry 'org/m': 'hf://org/m@v1/../m.onnx'"));
  EXPECT_THAT(ErrorOf("models:\n  - file_path: m.onnx\n", "m.yaml"),
              HasSubstr("file_path of the hub needs a model_id"));
}

}  // namespace
}  // namespace convgate::batch
