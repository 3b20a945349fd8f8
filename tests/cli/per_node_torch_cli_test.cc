// `compare --per-node` on the torchvision fixtures (label torch): a Conv perturbed in the middle of
// resnet18 is the first divergent node and the culprit, found the same with a budget small enough
// to need several chunks; a Log injected into mobilenet_v2 is where NaN is introduced.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::ProcessResult;

const fs::path kInjectFault = fs::path(CONVGATE_BINARY_DIR) / "convgate-inject-fault";

using testing::Describe;

class PerNodeTorchCliTest : public testing::TorchCliTest {
 protected:
  std::string Inject(const std::string& model, const std::string& fault, const std::string& node) {
    const std::string out = (dir_ / (model + "_" + fault + ".onnx")).string();
    ProcessResult r = testing::RunProcess({kInjectFault.string(), Fixture(model + ".onnx"), out,
                                           "--fault", fault, "--node", node, "--factor", "1.05"});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return out;
  }

  json PerNode(const std::string& model, const std::string& target,
               std::vector<std::string> extra) {
    std::vector<std::string> args = {Binary().string(), "compare", Fixture(model + ".onnx"), target,
                                     "--per-node",      "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult r = testing::RunProcess(args);
    EXPECT_EQ(r.exit_code, 1) << Describe(r);
    json report = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << Describe(r);
    return report.is_discarded() ? json::object() : report["per_node"];
  }
};

TEST_F(PerNodeTorchCliTest, PerturbedMiddleConvOfResnet18IsLocatedWithinATinyBudget) {
  const std::string conv = "/model/layer2/layer2.0/conv1/Conv";
  json per_node =
      PerNode("resnet18", Inject("resnet18", "perturb-conv", conv), {"--memory-budget", "16MiB"});
  EXPECT_GT(per_node["chunks"].get<int>(), 1) << per_node["chunks"];
  EXPECT_EQ(per_node["first_divergent"]["node"], conv);
  EXPECT_EQ(per_node["culprit"]["node"], conv);
  EXPECT_EQ(per_node["by_added_error"][0]["node"], conv);
  // Everything before the perturbed Conv passes; only it fails on the source's inputs.
  EXPECT_GT(per_node["summary"]["passed"].get<int>(), 10);
  EXPECT_GT(per_node["summary"]["failed"].get<int>(), 10);
}

TEST_F(PerNodeTorchCliTest, LogInjectedIntoMobilenetV2IsWhereNaNIsIntroduced) {
  const std::string conv = "/model/features/features.3/conv/conv.0/conv.0.0/Conv";
  json per_node = PerNode("mobilenet_v2", Inject("mobilenet_v2", "nan-node", conv), {});
  const std::string log = "injected_log_" + conv;
  EXPECT_EQ(per_node["non_finite"]["introduced_at"]["node"], log) << per_node["non_finite"];
  EXPECT_EQ(per_node["non_finite"]["introduced_at"]["op_type"], "Log");
  EXPECT_TRUE(per_node["non_finite"]["inherited_from"].is_null());
  EXPECT_EQ(per_node["culprit"]["node"], log);
}

}  // namespace
}  // namespace convgate
