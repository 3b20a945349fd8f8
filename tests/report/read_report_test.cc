// report.json read back (`convgate check`): every record, statistic, metric, histogram and policy
// knob survives the round trip, so re-judging a saved report under its own policy changes nothing.
#include "convgate/report/read_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "convgate/gate/rejudge.h"
#include "convgate/report/json_text.h"
#include "convgate/report/report.h"
#include "report/json/comparison.h"
#include "report/json/policy.h"
#include "sample_reports.h"

namespace convgate::report {
namespace {

using nlohmann::json;
using sample_reports::Reduction;
using sample_reports::Verification;

Tensor Floats(DType dtype, const std::vector<double>& values) {
  Tensor tensor =
      std::move(Tensor::Allocate(dtype, Shape::Of({static_cast<int64_t>(values.size())})).value());
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

gate::OutputCheck Check(const std::string& output, const Tensor& source, const Tensor& target,
                        const compare::Policy& policy) {
  gate::OutputCheck check;
  check.output = output;
  check.policy = policy.For(output, source.dtype(), target.dtype());
  check.tolerance = check.policy.tolerance();
  check.comparison = compare::CompareTensors(source, target, check.tolerance);
  check.passed = check.comparison->passed;
  check.failures = check.comparison->failures;
  return check;
}

// Outputs covering every field kind: finite errors, an inherited NaN and an Inf, float16
// (dtype defaults), integers (exact), and a policy with every knob set somewhere.
gate::CompareReport Saved() {
  gate::CompareReport report;
  report.source.role = "source";
  report.source.path = "a.npz";
  report.source.output_names = {"y", "h", "ids"};
  report.target = report.source;
  report.target.role = "target";
  report.target.path = "b.npz";
  EXPECT_TRUE(compare::AddMismatchPpm("y:10", report.policy).ok());
  EXPECT_TRUE(compare::AddCheckErrorStat("h:p95", report.policy).ok());
  EXPECT_TRUE(compare::AddMinSnrDb("20", report.policy).ok());
  report.policy.dtype_defaults[DType::kFloat16] = {1e-3, std::nullopt};
  // A weight-compression profile's per-output entry must come back, or `check` would re-judge
  // token_ids by the floating outputs' rule.
  compare::ConversionDefaults profile;
  profile.settings.min_cosine = 0.98;
  profile.per_output["ids"].mismatch_ppm = 5e5;
  profile.origin = "weight-compression profile";
  report.policy.conversion_defaults = profile;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  report.checks.push_back(Check("y", Floats(DType::kFloat32, {1, 2, nan, -3, 0, inf, 1e-3}),
                                Floats(DType::kFloat32, {1.01, 2, 5, -3.1, 1e-7, inf, 2e-3}),
                                report.policy));
  report.checks.push_back(Check("h", Floats(DType::kFloat16, {0.5, 0.25, 8, 100}),
                                Floats(DType::kFloat16, {0.5, 0.2501, 8.01, 99}), report.policy));
  report.checks.push_back(Check("ids", Floats(DType::kInt64, {1, 2, 3}),
                                Floats(DType::kInt64, {1, 2, 4}), report.policy));
  report.verdict = gate::Verdict::kFail;
  return report;
}

class ReadReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("convgate_read_report_" + std::to_string(::getpid()) + ".json");
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void Write(const json& report) const { std::ofstream(path_) << report.dump(); }

  std::filesystem::path path_;
};

TEST_F(ReadReportTest, EveryStatisticSurvivesTheRoundTrip) {
  const gate::CompareReport saved = Saved();
  Invocation invocation;
  invocation.command = "compare";
  Write(ReportJson(saved, invocation));
  Result<gate::CompareReport> read = ReadCompareReport(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->checks.size(), saved.checks.size());
  for (size_t idx = 0; idx < saved.checks.size(); ++idx) {
    EXPECT_EQ(internal::ComparisonJson(*read->checks[idx].comparison),
              internal::ComparisonJson(*saved.checks[idx].comparison))
        << saved.checks[idx].output;
    const compare::ErrorSummary& got = read->checks[idx].comparison->summary;
    const compare::ErrorSummary& want = saved.checks[idx].comparison->summary;
    EXPECT_TRUE(got == want) << saved.checks[idx].output;
  }
  EXPECT_EQ(internal::PolicyJson(read->policy), internal::PolicyJson(saved.policy));
  ASSERT_TRUE(read->policy.conversion_defaults.has_value());
  EXPECT_EQ(read->policy.conversion_defaults->per_output.at("ids").mismatch_ppm, 5e5);
  EXPECT_EQ(read->source.output_names, saved.source.output_names);
}

// Every sample of an output under the same policy: only the first result writes it, and the later
// ones read back with its tolerance (which their stats leave out too).
TEST_F(ReadReportTest, APolicyRepeatedOverSamplesIsWrittenOnce) {
  gate::CompareReport saved = Saved();
  saved.checks.resize(1);
  saved.checks.push_back(saved.checks[0]);
  saved.checks[1].sample = 1;
  saved.checks[1].policy.atol = 0.5;
  saved.checks[1].tolerance = saved.checks[1].policy.tolerance();
  saved.checks.push_back(saved.checks[1]);
  saved.checks[2].sample = 2;
  Invocation invocation;
  invocation.command = "compare";
  const json written = ReportJson(saved, invocation);
  EXPECT_TRUE(written["results"][0].contains("policy"));
  EXPECT_TRUE(written["results"][1].contains("policy"));  // another atol
  EXPECT_FALSE(written["results"][2].contains("policy"));
  Write(written);
  Result<gate::CompareReport> read = ReadCompareReport(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->checks.size(), 3u);
  for (size_t idx = 0; idx < 3; ++idx) {
    EXPECT_EQ(read->checks[idx].tolerance, saved.checks[idx].tolerance) << idx;
    EXPECT_EQ(internal::ComparisonJson(*read->checks[idx].comparison),
              internal::ComparisonJson(*saved.checks[idx].comparison))
        << idx;
  }
}

// Issue 9 (bug 15): a failing 1000-element output keeps its error summary's ladders and cells,
// whose counts and maxima repeat the result's errors; they are written once and read back the same.
TEST_F(ReadReportTest, WhatTheSummaryRepeatsIsWrittenOnceAndReadBack) {
  std::vector<double> source;
  std::vector<double> target;
  for (int idx = 0; idx < 1000; ++idx) {
    source.push_back(std::sin(idx * 0.37) * (1 + idx % 7));
    target.push_back(source.back() * (1 + 1e-3 * ((idx * 7919) % 13)) + 1e-4 * (idx % 5));
  }
  gate::CompareReport saved = Saved();
  saved.checks = {
      Check("y", Floats(DType::kFloat32, source), Floats(DType::kFloat32, target), saved.policy)};
  ASSERT_FALSE(saved.checks[0].comparison->summary.frontier.complete());
  Invocation invocation;
  invocation.command = "compare";
  const json written = ReportJson(saved, invocation);
  const json& stats = written["results"][0]["stats"];
  for (const char* part : {"abs_error", "rel_error", "joint"}) {
    EXPECT_FALSE(stats["error_summary"][part].contains("count")) << part;
  }
  EXPECT_FALSE(stats["error_summary"]["abs_error"].contains("max"));
  EXPECT_FALSE(stats["errors"]["max_abs_element"].contains("abs_error"));
  Write(written);
  Result<gate::CompareReport> read = ReadCompareReport(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->checks[0].comparison->summary == saved.checks[0].comparison->summary);
  EXPECT_EQ(internal::ComparisonJson(*read->checks[0].comparison),
            internal::ComparisonJson(*saved.checks[0].comparison));
}

// Hints every failing sample of an output gives are about the output: written once, in its
// aggregates row; a hint only some samples give stays in their results.
TEST_F(ReadReportTest, HintsSharedByEveryFailingSampleAreWrittenInTheAggregatesRow) {
  gate::CompareReport saved = Saved();
  saved.checks.resize(1);
  saved.checks[0].passed = false;
  saved.checks[0].hints = {"nan hint", "tolerance hint"};
  saved.checks.push_back(saved.checks[0]);
  saved.checks[1].sample = 1;
  saved.checks[1].hints = {"tolerance hint"};
  saved.aggregates.push_back({});
  saved.aggregates[0].output = "y";
  Invocation invocation;
  invocation.command = "compare";
  const json written = ReportJson(saved, invocation);
  EXPECT_EQ(written["aggregates"][0]["hints"], json::array({"tolerance hint"}));
  EXPECT_EQ(written["results"][0]["hints"], json::array({"nan hint"}));
  EXPECT_FALSE(written["results"][1].contains("hints"));
  // Without a row for the output, every result keeps its own.
  saved.aggregates.clear();
  const json rowless = ReportJson(saved, invocation);
  EXPECT_EQ(rowless["results"][1]["hints"], json::array({"tolerance hint"}));
}

// Issue 10: names and paths that are not UTF-8 are written escaped and read back as the bytes they
// were, so a re-judged report names the same outputs the comparison did.
TEST_F(ReadReportTest, BytesInNamesAndPathsSurviveTheRoundTrip) {
  gate::CompareReport saved = Saved();
  saved.source.path = "a\xff.npz";
  saved.checks[0].output = "y\xfe";
  saved.source.output_names[0] = "y\xfe";
  Invocation invocation;
  invocation.command = "compare";
  std::ofstream(path_) << DumpJson(ReportJson(saved, invocation));
  Result<gate::CompareReport> read = ReadCompareReport(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->source.path, "a\xff.npz");
  EXPECT_EQ(read->checks[0].output, "y\xfe");
  EXPECT_EQ(read->source.output_names, saved.source.output_names);
}

// Issue 10: a report not shaped as convgate writes it was re-judged anyway (a verdict "maybe" read
// as a failure, counts that cannot be, integers wrapped past int64). Each is refused naming the
// field.
TEST_F(ReadReportTest, ValuesNoComparisonCanHaveAreRefusedNamingTheField) {
  Invocation invocation;
  invocation.command = "compare";
  const json good = ReportJson(Saved(), invocation);
  const struct {
    std::string pointer;
    json value;
    std::string message;
  } cases[] = {
      {"/results/0/verdict", "maybe",
       "results[0].verdict: expected one of pass, fail, got the string \"maybe\""},
      {"/verdict", "error", "verdict: expected one of pass, fail, got the string \"error\""},
      {"/results/1/sample", -2, "results[1].sample: expected a count (>= 0), got -2"},
      {"/results/0/stats/source_values/nan", -1,
       "results[0].stats.source_values.nan: expected a count (>= 0), got -1"},
      {"/results/0/stats/num_elements", UINT64_MAX,
       "results[0].stats.num_elements: the integer 18446744073709551615 is out of range"},
      {"/results/0/stats/mismatches", 100,
       "results[0].stats.mismatches: 100 is more than num_elements (7)"},
      {"/results/0/stats/errors/compared", 8,
       "results[0].stats.errors: compared (8) is more than num_elements (7)"},
      {"/results/0/stats/mismatch_fraction", -0.5,
       "results[0].stats.mismatch_fraction: expected a number in [0, 1], got the number -0.5"},
      {"/results/0/stats/non_finite/first_introduced", -7,
       "results[0].stats.non_finite.first_introduced: expected a flat index or -1, got -7"},
      {"/results/0/stats/worst_element/index", json::array({-1}),
       "results[0].stats.worst_element.index: holds the negative -1"},
  };
  for (const auto& c : cases) {
    json broken = good;
    broken[json::json_pointer(c.pointer)] = c.value;
    Write(broken);
    Result<gate::CompareReport> read = ReadCompareReport(path_);
    ASSERT_FALSE(read.ok()) << c.pointer;
    EXPECT_EQ(read.status().code(), StatusCode::kDataLoss);
    EXPECT_EQ(read.status().message(), path_.string() + ": " + c.message) << c.pointer;
  }
}

TEST_F(ReadReportTest, RejudgingUnderTheSamePolicyGivesTheSameResults) {
  gate::CompareReport saved = Saved();
  // The gate's own judging, as `compare` does it.
  saved = gate::RejudgeCompareReport(std::move(saved), compare::Policy(), "");
  Invocation invocation;
  invocation.command = "compare";
  Write(ReportJson(saved, invocation));
  Result<gate::CompareReport> read = ReadCompareReport(path_);
  ASSERT_TRUE(read.ok()) << read.status().message();
  const gate::CompareReport again =
      gate::RejudgeCompareReport(std::move(read).value(), compare::Policy(), path_.string());
  ASSERT_EQ(again.checks.size(), saved.checks.size());
  for (size_t idx = 0; idx < saved.checks.size(); ++idx) {
    EXPECT_EQ(again.checks[idx].passed, saved.checks[idx].passed) << idx;
    EXPECT_EQ(again.checks[idx].failures, saved.checks[idx].failures) << idx;
    EXPECT_EQ(again.checks[idx].notes, saved.checks[idx].notes) << idx;
    EXPECT_EQ(again.checks[idx].policy.atol_origin, saved.checks[idx].policy.atol_origin) << idx;
  }
  EXPECT_EQ(again.checks[1].policy.atol, 1e-3);  // the float16 override survived
  EXPECT_EQ(again.verdict, saved.verdict);
  EXPECT_EQ(again.rejudged_from, path_.string());
}

TEST(ParseCompareReport, ReadsTextInMemoryAsReadCompareReportReadsTheFile) {
  Invocation invocation;
  invocation.command = "compare";
  const std::string text = ReportJson(Saved(), invocation).dump();
  Result<gate::CompareReport> read = ParseCompareReport(text, "piped report");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->checks.size(), 3u);
  EXPECT_EQ(read->source.output_names, Saved().source.output_names);
}

// verify's report.json carries its comparison as a compare report: check re-judges that one;
// a verify report without a comparison is still refused.
TEST(ParseCompareReport, ReadsTheComparisonInsideAVerifyReport) {
  Invocation invocation;
  invocation.command = "verify";  // as verify writes its comparison
  json verify = {{"schema_version", 1},
                 {"command", "verify"},
                 {"comparison", ReportJson(Saved(), invocation)}};
  Result<gate::CompareReport> read = ParseCompareReport(verify.dump(), "verify report");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->checks.size(), 3u);
  verify.erase("comparison");
  Result<gate::CompareReport> bare = ParseCompareReport(verify.dump(), "verify report");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("not a compare report"), std::string::npos)
      << bare.status().message();
}

TEST(ParseCompareReport, ErrorsNameWhatWasParsed) {
  Result<gate::CompareReport> not_json = ParseCompareReport("{\"schema", "piped report");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(not_json.status().message().starts_with("piped report: not a JSON report"))
      << not_json.status().message();
  Result<gate::CompareReport> no_schema = ParseCompareReport("{}", "piped report");
  ASSERT_FALSE(no_schema.ok());
  EXPECT_TRUE(no_schema.status().message().starts_with("piped report: schema_version"))
      << no_schema.status().message();
}

// Every record report.json holds and `convgate check` reads is written and read through one
// description (src/report/json/codec.h), so one round trip covers them all: a compare report with
// each record's optional fields present in one place and absent in another, NaN and Inf, a string
// comparison and bytes that are not UTF-8 is written, read back and written again, byte for byte
// the same.
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

gate::AgreementRecord Agreement() {
  gate::AgreementRecord record;
  record.output = "y";
  record.selected_by = "named";
  record.stats = {.kind = compare::PredictionKind::kScores,
                  .classes = 3,
                  .rows = 10,
                  .top1_agree = 8,
                  .top_k_agree = {{2, 9}},
                  .flip_margin = 0.1,
                  .margin_rows = 7,
                  .flips = 1,
                  .nan_rows = 1,
                  .diagonal = {{0, 5}, {2, 3}},
                  .off_diagonal = {{0, 1, 1}}};
  record.checks = {{"y:top1>=0.9", false, "top-1 agreement 0.8 < 0.9"}};
  return record;
}

Tensor Strings(std::vector<std::string> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return std::move(Tensor::FromStrings(Shape::Of({count}), std::move(values)).value());
}

gate::OutputCheck At(int sample, gate::OutputCheck check) {
  check.sample = sample;
  check.mismatches = {check.comparison->mismatches, check.comparison->mismatches};
  return check;
}

// Per-node validation: Reduction()'s (a node with a computed local error, set references) with
// a node whose local error could not be computed, one that errored, non-finite values and a NaN
// origin, and no culprit (a null reference).
gate::PerNodeReport PerNode() {
  gate::PerNodeReport per_node = *Reduction().comparison.per_node;
  per_node.strict = true;
  per_node.gate_failed = true;
  per_node.culprit = -1;
  gate::NodeSampleResult& sample = per_node.nodes[1].samples[1];
  sample.max_rel_error = kInf;
  sample.cosine = kNan;
  sample.target_min = -kInf;
  sample.target_non_finite = 1;
  sample.introduced_non_finite = 1;
  sample.introduced_inf = 1;
  per_node.non_finite.introduced = 1;
  per_node.non_finite.introduced_sample = 1;
  gate::NodeCheck add = per_node.nodes[1];
  add.node_index = 2;
  add.node = "";
  add.op_type = "com.example.Add";
  add.tensor = "sum";
  add.local = gate::LocalError{};
  add.local->computed = false;
  add.local->error = "the node has a subgraph";
  add.local->sample = 1;
  gate::NodeCheck gone;
  gone.node_index = 3;
  gone.node = "out";
  gone.op_type = "Identity";
  gone.tensor = "y";
  gone.status = gate::NodeStatus::kErrored;
  gone.error = "the target did not produce 'y'";
  per_node.nodes.push_back(add);
  per_node.nodes.push_back(gone);
  per_node.summary = {1, 2, 1, 1};
  // An If expanded (a value unmatched, the other branch not taken) and a nested Loop left whole.
  gate::SubgraphCheck inlined;
  inlined.side = "target";
  inlined.node = "If_0";
  inlined.op_type = "If";
  inlined.expanded = true;
  inlined.expansion = "then_branch";
  inlined.matched = {"c1", "r1"};
  inlined.unmatched = {{"c2", "the source has no value of this name"}};
  inlined.not_taken = 4;
  gate::SubgraphCheck whole;
  whole.side = "source";
  whole.node = "Loop_0/iter1/Loop_1";
  whole.op_type = "Loop";
  whole.parent = "Loop_0";
  whole.reason = "budget: 100 iterations exceed the unroll limit of 64";
  whole.unmatched = {{"h", whole.reason}};
  per_node.subgraphs = {inlined, whole};
  return per_node;
}

// Every record with its optional fields both set and unset somewhere.
gate::CompareReport Everything() {
  gate::CompareReport report;
  report.source.role = "source";
  report.source.path = "model.onnx";
  report.source.kind = "model";
  report.source.format = "onnx";
  report.source.backend = "exec";
  report.source.backend_version = "1";
  report.source.sha256 = std::string(64, 'a');
  report.source.load_seconds = 0.5;
  report.source.run_seconds = 1.25;
  report.source.output_names = {"y", "h", "ids", "text", "gone"};
  report.source.backend_command = "python run.py {model}";
  report.source.backend_log = "warning: \xff bytes";
  report.source.notes = {"a note"};
  report.target = report.source;
  report.target.role = "target";
  report.target.path = "saved/";
  report.target.kind = "outputs";
  report.target.backend_command.clear();
  report.target.backend_log.clear();
  report.target.output_matching = "position";
  report.target.output_renames = {"output_0 -> y"};
  report.target.notes.clear();
  report.inputs.origin = "generated (seed 1)";
  report.inputs.samples = 2;
  report.inputs.tensors = {{"image", "float32", {1, 3, 2, 2}}, {"ids", "int64", {}}};
  report.inputs.notes = {"batch defaulted to 1"};
  report.inputs.saved_to = "inputs.npz";
  EXPECT_TRUE(compare::AddMismatchPpm("y:10", report.policy).ok());
  EXPECT_TRUE(compare::AddCheckErrorStat("h:p95", report.policy).ok());
  EXPECT_TRUE(compare::AddMinSnrDb("20", report.policy).ok());
  report.policy.dtype_defaults[DType::kFloat16] = {1e-3, std::nullopt};
  const compare::Policy& policy = report.policy;
  report.checks.push_back(
      At(0, Check("y", Floats(DType::kFloat32, {1, 2, kNan, -3, 0, kInf, 1e-3}),
                  Floats(DType::kFloat32, {1.01, 2, 5, -3.1, 1e-7, kInf, 2e-3}), policy)));
  report.checks.back().hints = {"shared hint", "own hint"};
  report.checks.back().notes = {"a judging note"};
  report.checks.push_back(At(0, Check("h", Floats(DType::kFloat16, {0.5, 0.25, 8, 100}),
                                      Floats(DType::kFloat16, {0.5, 0.2501, 8.01, 99}), policy)));
  report.checks.push_back(At(
      0, Check("ids", Floats(DType::kInt64, {1, 2, 3}), Floats(DType::kInt64, {1, 2, 4}), policy)));
  report.checks.push_back(
      At(0, Check("text", Strings({"cat", "dog"}), Strings({"cat", "d\xc3\xb6g"}), policy)));
  // Sample 1: the same policies (left out), a bracketed verdict, a result without stats.
  report.checks.push_back(At(1, Check("y", Floats(DType::kFloat32, {1, 2, 3}),
                                      Floats(DType::kFloat32, {1, 2.5, kNan}), policy)));
  report.checks.back().hints = {"shared hint"};
  report.checks.back().verdict_exact = false;
  report.checks.back().mismatches = {1, 2};
  report.checks.push_back(
      At(1, Check("h", Floats(DType::kFloat16, {1, 2}), Floats(DType::kFloat16, {1, 2}), policy)));
  report.checks.back().comparison->tolerance = {0.5, 0.25};  // judged under another tolerance
  gate::OutputCheck gone;
  gone.sample = 1;
  gone.output = "gone";
  gone.policy = policy.For("gone");
  gone.tolerance = gone.policy.tolerance();
  gone.failures = {"the target has no output 'gone'"};
  gone.indeterminate = true;
  report.checks.push_back(gone);
  report.aggregates.push_back({"y", 2, 2, 0, 0, 0.1, 0.01, kInf, 3, 10, 1});
  report.aggregates.push_back({"h", 2, 0, -1, -1, 0.0, 0.0, 0.0, 0, 6, 0});
  report.agreements.push_back(Agreement());
  gate::AgreementRecord failed;
  failed.output = "h";
  failed.selected_by = "detected";
  failed.error = "sample 1: class scores need the same shape";
  report.agreements.push_back(failed);
  report.structure_failures = {"the source has 5 outputs, the target 4"};
  report.rejudged_from = "old/report.json";
  report.per_node = PerNode();
  report.verdict = gate::Verdict::kFail;
  return report;
}

const Invocation kInvocation = {
    "check", {"convgate", "check", "r.json"}, "2026-01-01T00:00:00Z", 1};

TEST(ReportCodec, EveryRecordSurvivesWriteReadWrite) {
  const std::string written = DumpJson(ReportJson(Everything(), kInvocation));
  Result<gate::CompareReport> read = ParseCompareReport(written, "written");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const std::string again = DumpJson(ReportJson(*read, kInvocation));
  EXPECT_EQ(json::parse(written), json::parse(again));
  EXPECT_EQ(written, again);
  // What the report leaves out for the results to hold really is left out, and came back.
  const json document = json::parse(written);
  EXPECT_FALSE(document["results"][4].contains("policy"));
  EXPECT_TRUE(document["results"][5]["stats"].contains("atol"));
  EXPECT_FALSE(document["results"][0]["stats"].contains("atol"));
  EXPECT_EQ(document["aggregates"][0]["hints"], json({"shared hint"}));
  EXPECT_EQ(document["results"][0]["hints"], json({"own hint"}));
  EXPECT_EQ(read->checks[5].comparison->tolerance, (compare::Tolerance{0.5, 0.25}));
  EXPECT_EQ(read->source.backend_log, "warning: \xff bytes");
  ASSERT_TRUE(read->per_node.has_value());
  EXPECT_EQ(read->per_node->nodes[2].local->error, "the node has a subgraph");
  EXPECT_EQ(read->per_node->culprit, -1);
  EXPECT_EQ(read->per_node->non_finite.inherited_sample, -1);
  EXPECT_EQ(document["per_node"]["by_added_error"][0]["node"], "conv1");
}

// The other workflows' reports, read back whole (ParseReport): run's rows, verify's conversion,
// task and held reports, reduce's node and reproduction; an error header and its absence.
gate::RunReport SanityRun() {
  const gate::CompareReport compare = Everything();
  gate::RunReport report;
  report.model = compare.source;
  report.model.role = "model";
  report.inputs = compare.inputs;
  report.bindings = {"batch=1"};
  gate::SanityCheck good;
  good.output = "y";
  good.dtype = "float32";
  good.shape = {1, 4};
  good.declared_dtype = "float32";
  good.declared_shape = "[batch, 4]";
  good.values = {.min = -1, .max = 2, .mean = 0.5, .finite = 4};
  good.num_elements = 4;
  gate::SanityCheck bad = good;
  bad.sample = 1;
  bad.values = {.min = kNan, .max = kInf, .mean = kNan, .finite = 1, .nan = 2, .pos_inf = 1};
  bad.passed = false;
  bad.failures = {"2 NaN"};
  report.checks = {good, bad};
  report.structure_failures = {"output 'z' is empty"};
  report.verdict = gate::Verdict::kFail;
  return report;
}

// A verify that converted, with the run and comparison above.
gate::VerifyReport Verify() {
  gate::VerifyReport report = Verification();
  report.conversion->cache_path = "cache/c/model.onnx";
  report.e2e = SanityRun();
  report.comparison = Everything();
  return report;
}

// A verify whose conversion failed: no output, no cache entry, the converter's log, an error.
gate::VerifyReport FailedConversion() {
  gate::VerifyReport report = Verification();
  report.target.clear();
  report.conversion_path.clear();
  convert::ConversionRecord& conversion = *report.conversion;
  conversion.source_sha256.clear();
  conversion.output_path.clear();
  conversion.output_sha256.clear();
  conversion.output_bytes = 0;
  conversion.cache_key.clear();
  conversion.cache_path.clear();
  conversion.notes.clear();
  conversion.log_tail = "Traceback: \xfe";
  conversion.error = convert::ConversionError::kFailed;
  conversion.error_message = "the converter exited with 1";
  report.conversion_passed = false;
  report.e2e.reset();
  report.comparison.reset();
  report.task.reset();
  report.error = gate::GateError{gate::Stage::kConvert, Status::Unavailable("exited with 1")};
  report.verdict = gate::Verdict::kError;
  return report;
}

// A reduce that found nothing to reduce.
gate::ReduceReport NothingReduced() {
  gate::ReduceReport report = Reduction();
  report.node = -1;
  report.reason.clear();
  report.files.clear();
  report.command.clear();
  report.reproduction.reset();
  report.reproduces = false;
  report.notes = {"nothing diverges"};
  report.verdict = gate::Verdict::kFail;
  return report;
}

template <typename Report>
void ExpectRoundTrip(const Report& report, const std::string& what) {
  const Invocation invocation = {
      "verify", {"convgate", "verify", "m.onnx"}, "2026-01-01T00:00:00Z", 2.5};
  const std::string written = DumpJson(ReportJson(report, invocation));
  Invocation header;
  Result<Report> read = ParseReport<Report>(written, what, &header);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(header.argv, invocation.argv) << what;
  const std::string again = DumpJson(ReportJson(*read, header));
  EXPECT_EQ(json::parse(written), json::parse(again)) << what;
  EXPECT_EQ(written, again) << what;
}

TEST(ReportCodec, EveryWorkflowsReportSurvivesWriteReadWrite) {
  ExpectRoundTrip(Everything(), "compare");
  ExpectRoundTrip(SanityRun(), "run");
  ExpectRoundTrip(Verify(), "verify");
  ExpectRoundTrip(FailedConversion(), "failed conversion");
  ExpectRoundTrip(Reduction(), "reduce");
  ExpectRoundTrip(NothingReduced(), "reduce, no node");
  Result<gate::VerifyReport> verify =
      ParseReport<gate::VerifyReport>(DumpJson(ReportJson(Verify(), kInvocation)), "verify");
  ASSERT_TRUE(verify.ok()) << verify.status().ToString();
  EXPECT_TRUE(verify->conversion_passed);
  EXPECT_EQ(verify->conversion->params.at("keep_io_types"), "true");
  EXPECT_EQ(verify->task->task, "image-classification");
  EXPECT_EQ(verify->e2e->checks[1].values.nan, 2);
  Result<gate::VerifyReport> failed = ParseReport<gate::VerifyReport>(
      DumpJson(ReportJson(FailedConversion(), kInvocation)), "failed");
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  EXPECT_FALSE(failed->conversion_passed);
  EXPECT_EQ(failed->error->stage, gate::Stage::kConvert);
  EXPECT_EQ(failed->error->status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(failed->conversion->error, convert::ConversionError::kFailed);
  Result<gate::ReduceReport> reduce =
      ParseReport<gate::ReduceReport>(DumpJson(ReportJson(Reduction(), kInvocation)), "reduce");
  ASSERT_TRUE(reduce.ok()) << reduce.status().ToString();
  EXPECT_EQ(reduce->node, 1);
  EXPECT_EQ(reduce->out_dir, "bug");
}

TEST(ReportCodec, ModelOriginsSurviveWriteReadWrite) {
  Invocation invocation = {"run", {"convgate", "run", "hf://org/m/model.onnx"}, "", 1.0};
  hub::ModelOrigin downloaded;
  downloaded.uri = "hf://org/m/model.onnx";
  downloaded.repo_id = "org/m";
  downloaded.revision = "main";
  downloaded.commit = std::string(40, 'a');
  downloaded.file = "model.onnx";
  downloaded.etag = std::string(64, 'b');
  downloaded.size = uint64_t{5} << 32;  // over 32 bits
  downloaded.how = "downloaded";
  hub::ModelOrigin converted = downloaded;
  converted.how = "converted";
  converted.converted_from = {"config.json", "model.safetensors"};
  converted.converter = "optimum-onnx";
  converted.converter_version = "optimum 1.2.3";
  invocation.model_origins = {downloaded, converted};
  const std::string written = DumpJson(ReportJson(SanityRun(), invocation));
  Invocation header;
  Result<gate::RunReport> read = ParseReport<gate::RunReport>(written, "run", &header);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(header.model_origins.size(), 2u);
  EXPECT_EQ(header.model_origins[0].size, uint64_t{5} << 32);
  EXPECT_EQ(header.model_origins[1].converted_from, converted.converted_from);
  EXPECT_EQ(DumpJson(ReportJson(*read, header)), written);
  // The same records outside report.json (summary.json, the store), and the console's line.
  Result<std::vector<hub::ModelOrigin>> again =
      ModelOriginsFromJson(ModelOriginsJson(invocation.model_origins));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)[1].converter, "optimum-onnx");
  EXPECT_EQ(ModelOriginText(converted),
            "hf://org/m/model.onnx: converted from config.json, model.safetensors of org/m at "
            "commit " +
                std::string(40, 'a') + " by optimum-onnx optimum 1.2.3, etag " +
                std::string(64, 'b'));
  Result<std::vector<hub::ModelOrigin>> bad =
      ModelOriginsFromJson(json::parse(R"([{"uri": "hf://org/m/x.onnx"}])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("model_origins[0]"), std::string::npos)
      << bad.status().message();
  // A local model: the header has no model_origins at all (golden files unchanged).
  EXPECT_FALSE(
      json::parse(DumpJson(ReportJson(SanityRun(), kInvocation))).contains("model_origins"));
}

}  // namespace
}  // namespace convgate::report
