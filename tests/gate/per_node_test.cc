// Per-node validation's pure parts: chunk planning, and the analysis that
// names the first divergent node, the culprit and the NaN/Inf origin.
#include "convgate/gate/per_node.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "convgate/core/limits.h"

namespace convgate::gate {
namespace {

TEST(ParseLocalErrorModeTest, KnowsThreeModes) {
  EXPECT_EQ(*ParseLocalErrorMode("none"), LocalErrorMode::kNone);
  EXPECT_EQ(*ParseLocalErrorMode("failed"), LocalErrorMode::kFailed);
  EXPECT_EQ(*ParseLocalErrorMode("all"), LocalErrorMode::kAll);
  EXPECT_FALSE(ParseLocalErrorMode("some").ok());
}

// A fixed 48 MiB, not a share of the machine; a quarter of usable memory only when that is less.
TEST(DefaultMemoryBudgetTest, Is48MiBUnlessMemoryIsScarce) {
  const int64_t usable = UsableMemoryBytes();
  if (usable <= 0 || usable >= int64_t{256} << 20) {
    EXPECT_EQ(DefaultMemoryBudget(), int64_t{48} << 20);
  } else {
    EXPECT_EQ(DefaultMemoryBudget(), std::max<int64_t>(usable / 4, int64_t{16} << 20));
  }
}

std::vector<size_t> Flatten(const std::vector<std::vector<size_t>>& chunks) {
  std::vector<size_t> all;
  for (const auto& chunk : chunks) all.insert(all.end(), chunk.begin(), chunk.end());
  return all;
}

TEST(PlanChunksTest, KeepsEveryChunkWithinBudgetAndEveryTensorOnceInOrder) {
  const std::vector<int64_t> bytes = {40, 30, 30, 10, 90, 5, 5, 60};
  const auto chunks = PlanChunks(bytes, 100);
  std::vector<size_t> expected(bytes.size());
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(Flatten(chunks), expected);
  for (const auto& chunk : chunks) {
    int64_t sum = 0;
    for (size_t idx : chunk) sum += bytes[idx];
    EXPECT_LE(sum, 100);
  }
  EXPECT_EQ(chunks.size(), 3u);  // {40,30,30} {10,90} {5,5,60}
}

TEST(PlanChunksTest, OversizedTensorGetsItsOwnChunk) {
  const auto chunks = PlanChunks({10, 500, 10}, 100);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[1], std::vector<size_t>{1});
}

TEST(PlanChunksTest, HugeBudgetIsOneChunkTinyBudgetIsOnePerTensor) {
  EXPECT_EQ(PlanChunks({1, 2, 3}, int64_t{1} << 40).size(), 1u);
  EXPECT_EQ(PlanChunks({1, 2, 3}, 1).size(), 3u);
  EXPECT_TRUE(PlanChunks({}, 100).empty());
}

NodeCheck Node(const std::string& name, NodeStatus status, double max_abs = 0.0) {
  NodeCheck node;
  node.node = name;
  node.op_type = "Conv";
  node.tensor = name + "_out";
  node.status = status;
  NodeSampleResult sample;
  sample.passed = status == NodeStatus::kPassed;
  sample.max_abs_error = max_abs;
  node.samples.push_back(sample);
  node.max_abs_error = max_abs;
  return node;
}

void SetLocal(NodeCheck& node, bool passed, double added) {
  node.local = LocalError{};
  node.local->computed = true;
  node.local->result.passed = passed;
  node.local->result.max_abs_error = added;
}

TEST(AnalyzePerNodeTest, CulpritIsTheFirstNodeFailingAloneNotTheFirstFailing) {
  PerNodeReport report;
  report.nodes = {Node("a", NodeStatus::kPassed), Node("b", NodeStatus::kFailed, 0.01),
                  Node("c", NodeStatus::kFailed, 0.5), Node("d", NodeStatus::kFailed, 0.7)};
  // b drifts because of rounding it inherits; c adds the real error; d only propagates it.
  SetLocal(report.nodes[1], true, 1e-7);
  SetLocal(report.nodes[2], false, 0.4);
  SetLocal(report.nodes[3], true, 2e-7);
  report.unmatched_target = {"x"};
  AnalyzePerNode(report);
  EXPECT_EQ(report.first_divergent, 1);
  EXPECT_EQ(report.culprit, 2);
  EXPECT_EQ(report.by_added_error, (std::vector<int>{2, 3, 1}));
  EXPECT_EQ(report.summary.passed, 1);
  EXPECT_EQ(report.summary.failed, 3);
  EXPECT_EQ(report.summary.errored, 0);
  EXPECT_EQ(report.summary.unmatched, 1);
  EXPECT_FALSE(report.gate_failed);  // not strict: only outputs gate
  report.strict = true;
  AnalyzePerNode(report);
  EXPECT_TRUE(report.gate_failed);
}

// A Cast to float16 fails a float32 tolerance by rounding alone: within its own rounding it is
// never the culprit, and the first node failing by more than rounding is.
TEST(AnalyzePerNodeTest, ANodeWithinItsOwnRoundingIsNeverTheCulprit) {
  PerNodeReport report;
  report.nodes = {Node("cast", NodeStatus::kFailed, 4e-4), Node("conv", NodeStatus::kFailed, 0.3)};
  report.nodes[0].op_type = "Cast";
  SetLocal(report.nodes[0], false, 4e-4);
  report.nodes[0].local->within_rounding = true;
  report.nodes[0].local->rounding_dtype = "float16";
  SetLocal(report.nodes[1], false, 0.3);
  AnalyzePerNode(report);
  EXPECT_EQ(report.first_divergent, 0);
  EXPECT_EQ(report.culprit, 1);
  report.nodes[1].local->result.passed = true;
  AnalyzePerNode(report);
  EXPECT_EQ(report.culprit, -1);
}

TEST(AnalyzePerNodeTest, NoCulpritWhenEveryNodePassesAlone) {
  PerNodeReport report;
  report.nodes = {Node("a", NodeStatus::kFailed, 0.1)};
  SetLocal(report.nodes[0], true, 1e-8);
  AnalyzePerNode(report);
  EXPECT_EQ(report.first_divergent, 0);
  EXPECT_EQ(report.culprit, -1);
}

TEST(AnalyzePerNodeTest, ErroredNodesDivergeAndGateUnderStrict) {
  PerNodeReport report;
  report.strict = true;
  report.nodes = {Node("a", NodeStatus::kPassed), Node("b", NodeStatus::kErrored)};
  AnalyzePerNode(report);
  EXPECT_EQ(report.first_divergent, 1);
  EXPECT_EQ(report.summary.errored, 1);
  EXPECT_TRUE(report.gate_failed);
}

// Issue 9: matching no intermediate at all compared nothing the user asked --strict to gate on.
TEST(AnalyzePerNodeTest, MatchingNothingFailsOnlyUnderStrict) {
  PerNodeReport report;
  report.unmatched_target = {"t"};
  report.unmatched_source = {"s"};
  AnalyzePerNode(report);
  EXPECT_EQ(report.first_divergent, -1);
  EXPECT_FALSE(report.gate_failed);
  report.strict = true;
  AnalyzePerNode(report);
  EXPECT_TRUE(report.gate_failed);
}

TEST(AnalyzePerNodeTest, SeparatesIntroducedFromInheritedNonFinite) {
  PerNodeReport report;
  report.nodes = {Node("a", NodeStatus::kPassed), Node("b", NodeStatus::kFailed),
                  Node("c", NodeStatus::kFailed), Node("d", NodeStatus::kFailed)};
  report.nodes[1].samples[0].source_non_finite = 3;  // already NaN in the source
  NodeSampleResult later;
  later.sample = 2;
  later.introduced_non_finite = 4;
  report.nodes[2].samples.push_back(later);
  report.nodes[3].samples[0].introduced_non_finite = 1;
  AnalyzePerNode(report);
  EXPECT_EQ(report.non_finite.inherited, 1);
  EXPECT_EQ(report.non_finite.inherited_sample, 0);
  EXPECT_EQ(report.non_finite.introduced, 2);
  EXPECT_EQ(report.non_finite.introduced_sample, 2);
}

TEST(AnalyzePerNodeTest, LocallyIntroducedNaNRanksFirst) {
  PerNodeReport report;
  report.nodes = {Node("a", NodeStatus::kFailed, 5.0), Node("b", NodeStatus::kFailed)};
  SetLocal(report.nodes[0], false, 5.0);
  SetLocal(report.nodes[1], false, 0.0);
  report.nodes[1].local->result.introduced_non_finite = 7;
  AnalyzePerNode(report);
  EXPECT_EQ(report.by_added_error.front(), 1);
  EXPECT_EQ(report.culprit, 0);  // topological order decides the culprit, not the ranking
}

}  // namespace
}  // namespace convgate::gate
