// Hostile strings on the real binary (issue 10): names, producers, paths, argv, numpy byte
// strings and a runner's stderr that are not UTF-8 are reported escaped, in every result file;
// one result file that cannot be written does not stop the others; a NUL in a name, which ONNX
// Runtime would truncate, and inputs convgate cannot generate are model problems (exit 3); a
// report.json that is not shaped as convgate writes it is refused by `check` (exit 3), naming the
// file and the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/utf8.h"
#include "graph/onnx_test_util.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";
const fs::path kSource = fs::path(CONVGATE_SOURCE_DIR);
const std::string kPython = "/usr/bin/python3";

// y = Identity(x), float[1, 4], with the names and producer given as raw bytes.
onnx::ModelProto IdentityModel(const std::string& in_name, const std::string& out_name,
                               const std::string& producer = "test") {
  onnx::ModelProto model = testing::ParseOnnxText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1, 4] x) => (float[1, 4] y) { y = Identity(x) }
  )");
  model.set_producer_name(producer);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.mutable_input(0)->set_name(in_name);
  graph.mutable_output(0)->set_name(out_name);
  graph.mutable_node(0)->set_input(0, in_name);
  graph.mutable_node(0)->set_output(0, out_name);
  return model;
}

// A .npy of numpy byte strings ('|S<width>'), elements given as raw bytes.
std::string ByteStringsNpy(const std::vector<std::string>& elements, size_t width) {
  std::string header = "{'descr': '|S" + std::to_string(width) +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(elements.size()) +
                       ",), }";
  header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  for (const std::string& element : elements) {
    bytes += element + std::string(width - element.size(), '\0');
  }
  return bytes;
}

bool IsUtf8(const std::string& text) { return !FindInvalidUtf8(text).has_value(); }

class StringsCliTest : public testing::CliTest {
 protected:
  static std::string Model(const std::string& name) { return (kModels / name).string(); }
  std::string Out() const { return Path("out"); }

  std::string WriteModel(const std::string& name, const onnx::ModelProto& model) {
    testing::WriteModel(model, dir_ / name);
    return Path(name);
  }
  std::string WriteBytes(const std::string& name, const std::string& bytes) {
    EXPECT_TRUE(WriteFileAtomic(dir_ / name, bytes).ok());
    return Path(name);
  }

  // A result file, which must be valid UTF-8; JSON files must also parse.
  static std::string ReadResult(const fs::path& path) {
    Result<std::string> text = ReadFile(path);
    EXPECT_TRUE(text.ok()) << path << ": " << text.status().message();
    if (!text.ok()) return "";
    EXPECT_TRUE(IsUtf8(*text)) << path << " is not UTF-8";
    return *text;
  }
  static json ReadJson(const fs::path& path) {
    const std::string text = ReadResult(path);
    json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded()) << path << " is not JSON";
    return parsed;
  }
  // Every result file is there and readable; returns report.json.
  json ReadResults(const fs::path& out) {
    ReadJson(out / "verify_result.json");
    const std::string junit = ReadResult(out / "junit.xml");
    for (char c : junit) {
      const auto byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte >= 0x20 || c == '\n' || c == '\t') << "control byte in junit.xml";
    }
    return ReadJson(out / "report.json");
  }
};

TEST_F(StringsCliTest, NamesAndProducerThatAreNotUtf8AreWrittenEscaped) {
  const std::string model = WriteModel("bad_names.onnx", IdentityModel("\xfe", "y\xff",
                                                                       "conv\xff"
                                                                       "gate"));
  ProcessResult run = Convgate({"run", model, "--out", Out()});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  json report = ReadResults(Out());
  EXPECT_EQ(report["model"]["outputs"][0], "y\\xff");
  EXPECT_EQ(report["inputs"]["tensors"][0]["name"], "\\xfe");
  const auto escaped = report["escaped_strings"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(escaped.begin(), escaped.end(), "/results/0/output"), escaped.end())
      << report["escaped_strings"].dump();
  EXPECT_NE(run.out.find("y\\xff"), std::string::npos) << run.out;
  EXPECT_TRUE(IsUtf8(run.out)) << run.out;

  ProcessResult inspect = Convgate({"inspect", model, "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  EXPECT_TRUE(IsUtf8(inspect.out));
  const json summary = json::parse(inspect.out);
  EXPECT_NE(summary.dump().find("conv\\\\xffgate"), std::string::npos) << inspect.out;
  ProcessResult shown = Convgate({"inspect", model});
  ASSERT_EQ(shown.exit_code, 0) << Describe(shown);
  EXPECT_NE(shown.out.find("conv\\xffgate"), std::string::npos) << shown.out;
}

// `check` reads the escaped names back as the bytes they were, so a per-output tolerance given
// with the raw name still applies, and the re-judged report escapes them again.
TEST_F(StringsCliTest, CheckRestoresEscapedNames) {
  const std::string model = WriteModel("bad_names.onnx", IdentityModel("x", "y\xff"));
  ProcessResult compare = Convgate({"compare", model, model, "--out", Out()});
  ASSERT_EQ(compare.exit_code, 0) << Describe(compare);
  ProcessResult check =
      Convgate({"check", Path("out/report.json"), "--atol", "y\xff:0.5", "--out", Path("checked")});
  ASSERT_EQ(check.exit_code, 0) << Describe(check);
  json report = ReadResults(Path("checked"));
  EXPECT_EQ(report["results"][0]["output"], "y\\xff");
  EXPECT_EQ(report["results"][0]["policy"]["atol"], 0.5) << report["results"][0].dump();
}

TEST_F(StringsCliTest, PathsAndArgvThatAreNotUtf8AreWrittenEscaped) {
  const std::string model = WriteModel("\xff\xfe.onnx", IdentityModel("x", "y"));
  const std::string out = Path("out\xff");
  ProcessResult run = Convgate({"compare", model, model, "--out", out});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  json report = ReadResults(out);
  EXPECT_EQ(report["source"]["path"], EscapeInvalidUtf8(model));
  EXPECT_EQ(report["argv"].back(), EscapeInvalidUtf8(out));
  EXPECT_TRUE(IsUtf8(run.out)) << run.out;

  ProcessResult missing = Convgate({"run", Path("gone\xff.onnx")});
  EXPECT_EQ(missing.exit_code, 3) << Describe(missing);
  EXPECT_NE(missing.err.find("gone\\xff.onnx"), std::string::npos) << Describe(missing);
}

// numpy |S arrays are bytes: compared byte for byte, shown and written escaped.
TEST_F(StringsCliTest, ByteStringOutputsCompareAsBytesAndReportEscaped) {
  const std::string source = WriteBytes("source.npy", ByteStringsNpy({"ok", "\xff\xfe"}, 4));
  const std::string target = WriteBytes("target.npy", ByteStringsNpy({"ok", "\xff\xfd"}, 4));
  ProcessResult same = Convgate({"compare", source, source, "--out", Path("same")});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  ReadResults(Path("same"));

  ProcessResult differ = Convgate({"compare", source, target, "--out", Out()});
  ASSERT_EQ(differ.exit_code, 1) << Describe(differ);
  json report = ReadResults(Out());
  const json& worst = report["results"][0]["stats"]["worst_element"];
  EXPECT_EQ(worst["source"], "\\xff\\xfe") << worst.dump();
  EXPECT_EQ(worst["target"], "\\xff\\xfd") << worst.dump();
  EXPECT_NE(differ.out.find("\"\\xff\\xfe\""), std::string::npos) << differ.out;
  EXPECT_TRUE(IsUtf8(differ.out)) << differ.out;
}

TEST_F(StringsCliTest, RunnerStderrThatIsNotTextIsKeptEscaped) {
  if (!fs::exists(kPython)) GTEST_SKIP() << "needs Debian's " << kPython;
  const std::string runner = kPython + " '" + (kSource / "tests/fixtures/fake_runner.py").string() +
                             "' binary-stderr {model} {inputs} {outputs}";
  ProcessResult r = Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn.onnx"),
                              "--target-exec", runner, "--out", Out()});
  ASSERT_EQ(r.exit_code, 3) << Describe(r);
  json report = ReadResults(Out());
  const std::string log = report["target"]["backend_log"].get<std::string>();
  EXPECT_NE(log.find("\\xff\\xfe"), std::string::npos) << log;
  // On the terminal ESC and the bad bytes are shown, not sent.
  EXPECT_TRUE(IsUtf8(r.err)) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x1b[2J"), std::string::npos) << r.err;
}

// One result file that cannot be written (report.json is a folder) does not stop the others.
TEST_F(StringsCliTest, EachResultFileIsWrittenWhateverBecomesOfTheOthers) {
  fs::create_directories(dir_ / "out" / "report.json" / "blocker");
  ProcessResult r =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"), "--out", Out()});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("report.json"), std::string::npos) << Describe(r);
  ReadJson(dir_ / "out" / "verify_result.json");
  ReadResult(dir_ / "out" / "junit.xml");
}

TEST_F(StringsCliTest, NulInAnOutputNameIsAModelProblem) {
  const std::string model =
      WriteModel("nul_name.onnx", IdentityModel("x", std::string("y\0hidden", 8)));
  for (const char* command : {"run", "compare"}) {
    std::vector<std::string> args = {command, model};
    if (std::string(command) == "compare") args.push_back(model);
    args.insert(args.end(), {"--out", Out()});
    ProcessResult r = Convgate(args);
    ASSERT_EQ(r.exit_code, 3) << Describe(r);
    EXPECT_NE(r.err.find("nul_name.onnx: output 0's name contains a NUL byte ('y\\x00hidden'): "
                         "ONNX Runtime takes names as C strings and would truncate it to 'y'"),
              std::string::npos)
        << Describe(r);
    EXPECT_EQ(ReadResults(Out())["error"]["stage"], "load");
  }
}

// Inputs whose type or size convgate cannot generate are the model's problem (exit 3), not a
// usage error (2); a --dim that makes an input too large still is one.
TEST_F(StringsCliTest, InputsConvgateCannotGenerateAreModelProblems) {
  onnx::ModelProto float8 = IdentityModel("x", "y");
  float8.set_ir_version(9);
  float8.mutable_opset_import(0)->set_version(19);
  for (auto* value :
       {float8.mutable_graph()->mutable_input(0), float8.mutable_graph()->mutable_output(0)}) {
    value->mutable_type()->mutable_tensor_type()->set_elem_type(17);  // FLOAT8E4M3FN (ONNX 1.14)
  }
  onnx::ModelProto huge = IdentityModel("x", "y");
  for (auto* value :
       {huge.mutable_graph()->mutable_input(0), huge.mutable_graph()->mutable_output(0)}) {
    auto* shape = value->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->mutable_dim(0)->set_dim_value(int64_t{1} << 31);
    shape->mutable_dim(1)->set_dim_value(int64_t{1} << 30);
  }
  // y = SequenceAt(s, 0) with s a sequence of float tensors (the text syntax of this onnx has no
  // sequence types).
  onnx::ModelProto sequence = IdentityModel("s", "y");
  onnx::TypeProto tensor = sequence.graph().input(0).type();
  *sequence.mutable_graph()
       ->mutable_input(0)
       ->mutable_type()
       ->mutable_sequence_type()
       ->mutable_elem_type() = tensor;
  sequence.mutable_graph()->mutable_node(0)->set_op_type("SequenceAt");
  sequence.mutable_graph()->mutable_node(0)->add_input("i");
  onnx::TensorProto* position = sequence.mutable_graph()->add_initializer();
  position->set_name("i");
  position->set_data_type(onnx::TensorProto::INT64);
  position->add_int64_data(0);
  const struct {
    std::string file;
    onnx::ModelProto model;
    std::string message;
  } cases[] = {
      {"float8.onnx", float8, "has type float8e4m3fn, which convgate cannot generate"},
      {"huge.onnx", huge, "has more than 2^60 elements"},
      {"sequence.onnx", sequence, "which convgate cannot generate"},
  };
  for (const auto& c : cases) {
    const std::string model = WriteModel(c.file, c.model);
    ProcessResult r = Convgate({"run", model});
    EXPECT_EQ(r.exit_code, 3) << c.file << "\n" << Describe(r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.file << "\n" << Describe(r);
  }

  onnx::ModelProto symbolic = IdentityModel("x", "y");
  symbolic.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  const std::string model = WriteModel("symbolic.onnx", symbolic);
  ProcessResult usage = Convgate({"run", model, "--dim", "batch=4611686018427387904"});
  EXPECT_EQ(usage.exit_code, 2) << Describe(usage);
}

// YAML is UTF-8: a policy file holding other bytes is refused naming the file and the line, rather
// than failing later as "a tolerance names output '\xff\xfe'" with no file in sight.
TEST_F(StringsCliTest, PolicyFileThatIsNotUtf8IsRefusedNamingIt) {
  const std::string policy = WriteBytes("policy.yaml", "outputs:\n  \xff\xfe: {atol: 1}\n");
  ProcessResult r = Convgate(
      {"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"), "--policy", policy});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find(policy + ": line 2: not valid YAML: byte 0xff at offset 11 is not UTF-8"),
            std::string::npos)
      << Describe(r);
}

class CheckShapeCliTest : public StringsCliTest {
 protected:
  // A real compare report, changed by `edit`, written as `name`; returns its path.
  std::string Broken(const std::string& name, const std::function<void(json&)>& edit) {
    if (!fs::exists(dir_ / "good" / "report.json")) {
      ProcessResult good = Convgate({"compare", Model("tinycnn.onnx"),
                                     Model("tinycnn_converted.onnx"), "--out", Path("good")});
      EXPECT_EQ(good.exit_code, 0) << Describe(good);
    }
    json report = ReadJson(dir_ / "good" / "report.json");
    edit(report);
    return WriteBytes(name, report.dump());
  }
};

TEST_F(CheckShapeCliTest, ReportsNotShapedAsConvgateWritesThemAreRefused) {
  const struct {
    std::string name;
    std::function<void(json&)> edit;
    std::string message;
  } cases[] = {
      {"stats_nonsense.json", [](json& r) { r["results"][0]["stats"] = "nonsense"; },
       "results[0].stats: expected an object, got the string \"nonsense\""},
      {"verdict.json", [](json& r) { r["results"][0]["verdict"] = "maybe"; },
       "results[0].verdict: expected one of pass, fail, got the string \"maybe\""},
      {"negative_count.json", [](json& r) { r["results"][0]["stats"]["num_elements"] = -10; },
       "results[0].stats.num_elements: expected a count (>= 0), got -10"},
      {"huge_count.json", [](json& r) { r["results"][0]["stats"]["mismatches"] = UINT64_MAX; },
       "results[0].stats.mismatches: the integer 18446744073709551615 is out of range"},
      {"more_mismatches.json", [](json& r) { r["results"][0]["stats"]["mismatches"] = 1000000; },
       "results[0].stats.mismatches: 1000000 is more than num_elements"},
      {"fraction.json", [](json& r) { r["results"][0]["stats"]["mismatch_fraction"] = 7.5; },
       "results[0].stats.mismatch_fraction: expected a number in [0, 1], got the number 7.5"},
      {"negative_sample.json", [](json& r) { r["results"][0]["sample"] = -1; },
       "results[0].sample: expected a count (>= 0), got -1"},
      {"frontier_lies.json",
       [](json& r) {
         r["results"][0]["stats"]["error_summary"]["frontier"]["points"] = {-5, 1e30};
       },
       "results[0].stats.error_summary.frontier.points: expected an array of integers"},
      {"frontier_negative.json",
       [](json& r) {
         r["results"][0]["stats"]["error_summary"]["frontier"]["points"] = {-5, 3};
       },
       "results[0].stats.error_summary.frontier.points: bucket -5 out of range"},
      {"escaped_lies.json", [](json& r) { r["escaped_strings"] = {"/no/such/field"}; },
       "escaped_strings[0]: '/no/such/field' names nothing in the report"},
  };
  for (const auto& c : cases) {
    const std::string path = Broken(c.name, c.edit);
    ProcessResult r = Convgate({"check", path});
    EXPECT_EQ(r.exit_code, 3) << c.name << "\n" << Describe(r);
    EXPECT_NE(r.err.find(path + ": " + c.message), std::string::npos) << c.name << "\n"
                                                                      << Describe(r);
  }
}

}  // namespace
}  // namespace convgate
