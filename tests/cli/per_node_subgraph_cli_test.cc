// `compare --per-node` inside If/Loop/Scan bodies on the real binary, on the models of
// scripts/make_subgraph_fixtures.py: the taken If branch is inlined and matched, Loops and Scans
// are unrolled, nesting unwraps, a fault injected into a branch is located at the body's node by
// name, and nodes that cannot be expanded are reported with their reason and unmatched values.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"
#include "testing/torch_fixtures.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

// The fixture folder (built once per cache key by the script).
fs::path Fixtures() {
  static const fs::path folder = [] {
    std::string error;
    const std::string found = testing::SubgraphFixtureFolder(error);
    EXPECT_TRUE(error.empty()) << error;
    return fs::path(found);
  }();
  return folder;
}

std::string Model(const std::string& name) { return (Fixtures() / (name + ".onnx")).string(); }

bool Contains(const json& array, const std::string& value) {
  for (const json& item : array) {
    if (item == value) return true;
  }
  return false;
}

class PerNodeSubgraphCliTest : public testing::CliTest {
 protected:
  json PerNode(const std::string& source, const std::string& target, std::vector<std::string> extra,
               int expected_exit) {
    std::vector<std::string> args = {"compare", source, target, "--per-node", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = Convgate(args);
    EXPECT_EQ(r.exit_code, expected_exit) << Describe(r);
    json report = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << r.out;
    if (report.is_discarded() || !report.contains("per_node")) return json::object();
    return report["per_node"];
  }

  // The subgraphs entry of `side` for `node`; fails the test and returns {} when absent.
  static json Subgraph(const json& per_node, const std::string& side, const std::string& node) {
    for (const json& check : per_node.value("subgraphs", json::array())) {
      if (check["side"] == side && check["node"] == node) return check;
    }
    ADD_FAILURE() << "no " << side << " subgraph entry for " << node << ":\n" << per_node.dump(1);
    return json::object();
  }

  // The node entry comparing `tensor`, or {}.
  static json NodeOf(const json& per_node, const std::string& tensor) {
    for (const json& node : per_node.value("nodes", json::array())) {
      if (node["tensor"] == tensor) return node;
    }
    return json::object();
  }
};

TEST_F(PerNodeSubgraphCliTest, TakenIfBranchIsInlinedAndMatchedOnBothSides) {
  const json per_node =
      PerNode(Model("if_conv"), Model("if_conv"), {"--val-range", "mode:[1,1]"}, 0);
  for (const char* side : {"source", "target"}) {
    const json check = Subgraph(per_node, side, "If_0");
    EXPECT_EQ(check["expanded"], true) << check.dump(1);
    EXPECT_EQ(check["expansion"], "then_branch");
    EXPECT_EQ(check["matched_count"], 3) << check.dump(1);
    EXPECT_EQ(check["unmatched_count"], 0) << check.dump(1);
    EXPECT_EQ(check["not_taken"], 4);  // else_branch's four values were never computed
  }
  const json conv = NodeOf(per_node, "then_c1");
  EXPECT_EQ(conv["node"], "then_conv1") << per_node.dump(1);
  EXPECT_EQ(conv["op_type"], "Conv");
  EXPECT_EQ(conv["status"], "passed");
  EXPECT_EQ(per_node["summary"]["failed"], 0);
  // Without expansion the main graph has three node outputs (is_one, branch_out, y; "one" too).
  EXPECT_GE(per_node["summary"]["matched"].get<int>(), 6) << per_node.dump(1);
}

TEST_F(PerNodeSubgraphCliTest, ConditionPicksTheElseBranch) {
  const json per_node =
      PerNode(Model("if_conv"), Model("if_conv"), {"--val-range", "mode:[0,0]"}, 0);
  const json check = Subgraph(per_node, "target", "If_0");
  EXPECT_EQ(check["expansion"], "else_branch") << check.dump(1);
  EXPECT_TRUE(Contains(check["matched"], "else_m1")) << check.dump(1);
  EXPECT_FALSE(NodeOf(per_node, "else_m2").empty());
  EXPECT_TRUE(NodeOf(per_node, "then_c1").empty());
}

TEST_F(PerNodeSubgraphCliTest, SamplesTakingDifferentBranchesLeaveTheIfWhole) {
  // Seed 2 draws mode 1 for sample 0 and 0 for sample 1 (convgate's PRNG is the same everywhere).
  const json per_node = PerNode(Model("if_conv"), Model("if_conv"),
                                {"--val-range", "mode:[0,1]", "--samples", "6", "--seed", "2"}, 0);
  const json check = Subgraph(per_node, "target", "If_0");
  EXPECT_EQ(check["expanded"], false);
  EXPECT_NE(check["reason"].get<std::string>().find("the samples disagree"), std::string::npos)
      << check.dump(1);
  EXPECT_EQ(check["unmatched_count"], 7);  // both branches' values
  EXPECT_TRUE(NodeOf(per_node, "then_c1").empty());
}

TEST_F(PerNodeSubgraphCliTest, FaultInsideABranchIsLocalizedToTheBodyNode) {
  const std::string broken = (dir_ / "if_conv_broken.onnx").string();
  ProcessResult inject =
      testing::RunProcess({Tool("convgate-inject-fault").string(), Model("if_conv"), broken,
                           "--fault", "perturb-conv", "--node", "then_conv1", "--factor", "1.5"});
  ASSERT_EQ(inject.exit_code, 0) << Describe(inject);
  const json per_node = PerNode(Model("if_conv"), broken, {"--val-range", "mode:[1,1]"}, 1);
  ASSERT_TRUE(per_node["first_divergent"].is_object()) << per_node.dump(1);
  EXPECT_EQ(per_node["first_divergent"]["node"], "then_conv1");
  ASSERT_TRUE(per_node["culprit"].is_object()) << per_node.dump(1);
  EXPECT_EQ(per_node["culprit"]["node"], "then_conv1");
  // Downstream the branch fails too, but by inheritance: alone, then_conv2 adds nothing.
  const json conv2 = NodeOf(per_node, "then_out");
  EXPECT_EQ(conv2["status"], "failed");
  ASSERT_TRUE(conv2.contains("local")) << conv2.dump(1);
  EXPECT_EQ(conv2["local"]["passed"], true) << conv2.dump(1);
}

TEST_F(PerNodeSubgraphCliTest, LoopIsUnrolledPerIteration) {
  const json per_node = PerNode(Model("loop"), Model("loop"), {}, 0);
  const json check = Subgraph(per_node, "target", "Loop_0");
  EXPECT_EQ(check["expansion"], "4 iterations") << check.dump(1);
  // Five values per iteration: matmul, add, tanh, the condition's Identity, the scan copy.
  EXPECT_EQ(check["matched_count"], 20) << check.dump(1);
  for (int k = 0; k < 4; ++k) {
    const std::string tanh = "Loop_0/iter" + std::to_string(k) + "/body_h";
    EXPECT_EQ(NodeOf(per_node, tanh)["status"], "passed") << tanh;
  }
  EXPECT_EQ(NodeOf(per_node, "Loop_0/iter3/body_h")["node"], "Loop_0/iter3/body_tanh");
  EXPECT_EQ(per_node["summary"]["failed"], 0);
}

TEST_F(PerNodeSubgraphCliTest, ScanIsUnrolledPerStep) {
  const json per_node = PerNode(Model("scan"), Model("scan"), {}, 0);
  const json check = Subgraph(per_node, "target", "Scan_0");
  EXPECT_EQ(check["expansion"], "5 iterations") << check.dump(1);
  EXPECT_EQ(check["matched_count"], 25) << check.dump(1);
  EXPECT_EQ(NodeOf(per_node, "Scan_0/iter4/scan_h")["status"], "passed") << per_node.dump(1);
  EXPECT_EQ(per_node["summary"]["failed"], 0);
}

TEST_F(PerNodeSubgraphCliTest, NestedLoopInsideTheTakenBranchUnwrapsToo) {
  const json per_node = PerNode(Model("nested"), Model("nested"), {"--val-range", "mode:[1,1]"}, 0);
  const json outer = Subgraph(per_node, "target", "If_outer");
  EXPECT_EQ(outer["expansion"], "then_branch") << outer.dump(1);
  const json inner = Subgraph(per_node, "target", "Loop_inner");
  EXPECT_EQ(inner["parent"], "If_outer") << inner.dump(1);
  EXPECT_EQ(inner["expansion"], "3 iterations") << inner.dump(1);
  EXPECT_EQ(NodeOf(per_node, "Loop_inner/iter2/inner_h")["status"], "passed") << per_node.dump(1);
}

TEST_F(PerNodeSubgraphCliTest, NodesThatCannotBeExpandedSayWhy) {
  const json per_node = PerNode(Model("unexpandable"), Model("unexpandable"), {}, 0);
  const json big = Subgraph(per_node, "target", "Loop_big");
  EXPECT_EQ(big["expanded"], false);
  EXPECT_NE(big["reason"].get<std::string>().find("100 iterations exceed the unroll limit"),
            std::string::npos)
      << big.dump(1);
  EXPECT_EQ(big["unmatched_count"], 5) << big.dump(1);  // big_mm, big_add, big_h, big_cond, ...
  ASSERT_FALSE(big["unmatched"].empty());
  EXPECT_EQ(big["unmatched"][0]["reason"], big["reason"]);
  const json loop_while = Subgraph(per_node, "target", "Loop_while");
  EXPECT_EQ(loop_while["expanded"], false);
  EXPECT_NE(loop_while["reason"].get<std::string>().find("trip count unknown"), std::string::npos)
      << loop_while.dump(1);
  EXPECT_GT(loop_while["unmatched_count"].get<int>(), 0);

  // The console names them and the reason too.
  ProcessResult text = Convgate({"compare", Model("unexpandable"), Model("unexpandable"),
                                 "--per-node", "--out", (dir_ / "out").string()});
  EXPECT_EQ(text.exit_code, 0) << Describe(text);
  EXPECT_NE(text.out.find("Loop_while"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("trip count unknown"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace convgate
