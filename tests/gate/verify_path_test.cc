// verify's Step 1 (gate/verify_path.h) on files and folders made here, and the --context file
// reader (ReadVerifyContext).
#include "gate/verify_path.h"

#include <gtest/gtest.h>

#include <fstream>

#include "convgate/gate/verify.h"
#include "graph/onnx_test_util.h"

namespace convgate::gate::internal {
namespace {

namespace fs = std::filesystem;

std::string Kinds(const std::vector<PathStep>& steps) {
  std::string kinds;
  for (const PathStep& step : steps) kinds += (kinds.empty() ? "" : ",") + step.kind;
  return kinds;
}

class VerifyPathTest : public ::testing::Test {
 protected:
  fs::path Touch(const std::string& name) {
    const fs::path path = dir_.path() / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "{}";
    return path;
  }
  testing::ScopedTempDir dir_;
};

TEST_F(VerifyPathTest, EachKindOfSourceGetsTheDocumentsPath) {
  const fs::path hf = Touch("bert/config.json").parent_path();
  EXPECT_EQ(Kinds(ChooseVerifyPaths(hf, std::nullopt)), "optimum-openvino");
  EXPECT_NE(ChooseVerifyPaths(hf, std::nullopt)[0].why.find("Path A"), std::string::npos);
  EXPECT_EQ(Kinds(ChooseVerifyPaths(Touch("m.onnx"), std::nullopt)), "openvino");
  EXPECT_EQ(Kinds(ChooseVerifyPaths(Touch("m.pt"), std::nullopt)), "openvino");
  EXPECT_EQ(Kinds(ChooseVerifyPaths(Touch("frozen.pb"), std::nullopt)), "openvino");
  const fs::path saved = Touch("saved/saved_model.pb").parent_path();
  EXPECT_NE(ChooseVerifyPaths(saved, std::nullopt)[0].why.find("ovc"), std::string::npos);
  // A model that does not generate falls back to Path B (convert_model of the transformers model).
  const fs::path classifier = dir_.path() / "cls";
  fs::create_directories(classifier);
  std::ofstream(classifier / "config.json")
      << R"({"model_type": "bert", "architectures": ["BertForSequenceClassification"]})";
  EXPECT_EQ(Kinds(ChooseVerifyPaths(classifier, std::nullopt)), "optimum-openvino,openvino");
  // Unclear: A, then B; without optimum's support, B only.
  EXPECT_EQ(Kinds(ChooseVerifyPaths(Touch("model.bin"), std::nullopt)),
            "optimum-openvino,openvino");
  EXPECT_EQ(Kinds(ChooseVerifyPaths(Touch("model.bin"), false)), "openvino");
  EXPECT_EQ(Kinds(ChooseVerifyPaths(hf, false)), "openvino");
}

TEST_F(VerifyPathTest, TheContextFileGivesModelSupportAndTheResultFolder) {
  const fs::path model = Touch("agent-results/models/bert/config.json").parent_path();
  const fs::path state = dir_.path() / "agent-results" / "pipeline_state.json";
  std::ofstream(state) << R"({"model_id": "models/bert", "optimum_supported": true})";
  Result<VerifyContext> context = ReadVerifyContext(state);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  // Relative to the file's folder, since it is not one relative to the working directory.
  EXPECT_EQ(fs::path(context->model_id), model);
  EXPECT_EQ(context->optimum_supported, true);
  EXPECT_EQ(context->out_dir, dir_.path() / "agent-results" / "verify-conversion");

  std::ofstream(state) << R"({"model_id": 7})";
  Result<VerifyContext> wrong = ReadVerifyContext(state);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("model_id must be a non-empty string"),
            std::string::npos);
  std::ofstream(state) << "{not json";
  EXPECT_EQ(ReadVerifyContext(state).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadVerifyContext(dir_.path() / "none.json").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace convgate::gate::internal
