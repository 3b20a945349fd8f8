// Each pass on a small model: the nodes it marks (and records), the graph after, and numerical
// equivalence by running the original and the transformed model in ONNX Runtime.
#include "convgate/transform/transform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "convert/convert_test_util.h"
#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"
#include "transform/models.h"

namespace convgate::transform {
namespace {

namespace fs = std::filesystem;

std::map<std::string, int> OpCounts(const onnx::ModelProto& model) {
  std::map<std::string, int> counts;
  for (const onnx::NodeProto& node : model.graph().node()) ++counts[node.op_type()];
  return counts;
}

class TransformTest : public ::testing::Test {
 protected:
  // Writes the model as source.onnx, applies `passes`, and loads the result into after_.
  // `binary`: `text` is a serialized ModelProto rather than ONNX text.
  TransformRecord Transform(const std::string& text, const std::string& passes,
                            bool binary = false) {
    if (binary) {
      EXPECT_TRUE(WriteFileAtomic(Source(), text).ok());
    } else {
      testing::WriteModel(testing::ParseOnnxText(text), Source());
    }
    Result<std::vector<PassSpec>> specs = ParsePassSpecs({passes});
    EXPECT_TRUE(specs.ok()) << specs.status().ToString();
    if (!specs.ok()) return {};
    Result<TransformRecord> record = TransformModelFile(Source(), Output(), *specs);
    EXPECT_TRUE(record.ok()) << record.status().ToString();
    if (!record.ok()) return {};
    Result<std::string> bytes = ReadFile(Output());
    EXPECT_TRUE(bytes.ok() && after_.ParseFromString(*bytes));
    return std::move(record).value();
  }

  // The largest |difference| over every output of both models run in ONNX Runtime.
  double MaxOutputDiff() {
    Result<TensorMap> before = testing::RunInOrt(Source());
    Result<TensorMap> after = testing::RunInOrt(Output());
    EXPECT_TRUE(before.ok()) << before.status().ToString();
    EXPECT_TRUE(after.ok()) << after.status().ToString();
    if (!before.ok() || !after.ok()) return 1e30;
    EXPECT_EQ(before->Names(), after->Names());
    double worst = 0.0;
    for (const TensorMap::Entry& entry : *before) {
      const Tensor* other = after->Find(entry.name);
      if (other == nullptr) return 1e30;
      worst = std::max(worst, testing::MaxAbsDiff(entry.tensor, *other));
    }
    return worst;
  }

  std::vector<std::string> Marked(const PassRecord& pass) {
    Result<std::vector<std::string>> nodes = TransformedNodes(Output(), pass.signature);
    EXPECT_TRUE(nodes.ok()) << nodes.status().ToString();
    return nodes.ok() ? *nodes : std::vector<std::string>{};
  }

  static std::vector<std::string> Kinds(const PassRecord& pass) {
    std::vector<std::string> kinds;
    for (const NodeChange& change : pass.changes) kinds.push_back(change.kind + " " + change.node);
    return kinds;
  }

  fs::path Source() const { return dir_.path() / "source.onnx"; }
  fs::path Output() const { return dir_.path() / "out.onnx"; }

  testing::ScopedTempDir dir_;
  onnx::ModelProto after_;
};

using Strings = std::vector<std::string>;

TEST_F(TransformTest, FoldBatchNormFoldsIntoConvAndKeepsOutputs) {
  TransformRecord record = Transform(testing::ConvBatchNormModel(), "fold_batchnorm");
  ASSERT_EQ(record.passes.size(), 1u);
  const PassRecord& pass = record.passes[0];
  EXPECT_FALSE(pass.preserves_computation);
  EXPECT_EQ(Kinds(pass), (Strings{"changed c", "removed n"}));
  EXPECT_EQ(Marked(pass), Strings{"c"});  // the Conv, named after its original output
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
  EXPECT_EQ(after_.graph().node(0).output(0), "n");
  EXPECT_EQ(record.nodes_before, 3);
  EXPECT_EQ(record.nodes_after, 2);
  EXPECT_LT(MaxOutputDiff(), 1e-5);
}

TEST_F(TransformTest, WrongFoldVariantChangesTheOutputs) {
  // The control for --validate: dropping epsilon = 0.1 against variances of 0.05-0.3 must show.
  Transform(testing::ConvBatchNormModel(), "fold_batchnorm_wrong_for_tests");
  EXPECT_EQ(OpCounts(after_).count("BatchNormalization"), 0u);
  EXPECT_GT(MaxOutputDiff(), 1e-2);
}

TEST_F(TransformTest, FoldBatchNormLeavesAConvWithOtherReadersAlone) {
  // The Conv output is also a graph output: folding would change it.
  std::string text = testing::ConvBatchNormModel();
  text.replace(text.find("=> (float[1,4,6,6] y)"), 21, "=> (float[1,4,6,6] y, float[1,4,6,6] c)");
  TransformRecord record = Transform(text, "fold_batchnorm");
  EXPECT_TRUE(record.passes[0].changes.empty());
  EXPECT_EQ(OpCounts(after_).count("BatchNormalization"), 1u);
}

// The ops of `model` other than the Constant and Identity nodes the weights were moved into.
std::map<std::string, int> OpCountsWithoutWeightNodes(const onnx::ModelProto& model) {
  std::map<std::string, int> counts = OpCounts(model);
  counts.erase("Constant");
  counts.erase("Identity");
  return counts;
}

std::vector<std::string> RemovedOps(const PassRecord& pass, const std::string& op) {
  std::vector<std::string> nodes;
  for (const NodeChange& change : pass.changes) {
    if (change.kind == "removed" && change.op == op) nodes.push_back(change.node);
  }
  return nodes;
}

TEST_F(TransformTest, FoldBatchNormReadsWeightsFromConstantNodes) {
  // paddle2onnx stores every weight as a Constant node: all six here are.
  const onnx::ModelProto model =
      testing::WeightsAsConstantNodes(testing::ParseOnnxText(testing::ConvBatchNormModel()));
  ASSERT_EQ(model.graph().initializer_size(), 0);
  TransformRecord record = Transform(testing::Serialize(model), "fold_batchnorm", /*binary=*/true);
  const PassRecord& pass = record.passes[0];
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
  // The folded weight and bias are new initializers; the six Constant nodes are removed, and
  // recorded, because nothing reads them any more.
  EXPECT_EQ(after_.graph().initializer_size(), 2);
  EXPECT_EQ(RemovedOps(pass, "Constant"),
            (Strings{"Constant_w", "Constant_b", "Constant_scale", "Constant_beta", "Constant_mean",
                     "Constant_var"}));
  EXPECT_TRUE(pass.skipped.empty());
  EXPECT_LT(MaxOutputDiff(), 1e-5);
}

TEST_F(TransformTest, FoldBatchNormReadsWeightsThroughIdentity) {
  // PyTorch exports read some weights through Identity nodes over initializers.
  const onnx::ModelProto model =
      testing::WeightsThroughIdentity(testing::ParseOnnxText(testing::ConvBatchNormModel()));
  TransformRecord record = Transform(testing::Serialize(model), "fold_batchnorm", /*binary=*/true);
  const PassRecord& pass = record.passes[0];
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
  EXPECT_EQ(RemovedOps(pass, "Identity").size(), 6u);
  EXPECT_EQ(after_.graph().initializer_size(), 2);  // the old weights are no longer read
  EXPECT_LT(MaxOutputDiff(), 1e-5);
}

TEST_F(TransformTest, PassesReadConstantNodesAndIdentityChainsAlike) {
  struct Case {
    std::string text;
    std::string pass;
    std::map<std::string, int> ops;  // without Constant and Identity nodes
  };
  const std::vector<Case> cases = {
      {testing::MatMulAddModel(),
       "fuse_matmul_add",
       {{"Gemm", 1}, {"Relu", 1}, {"MatMul", 1}, {"Add", 1}}},
      {testing::ParallelMatMulModel(),
       "merge_parallel_matmuls",
       {{"MatMul", 1}, {"Split", 1}, {"Relu", 1}, {"Sigmoid", 1}}},
      {testing::DivModel(), "div_to_mul", {{"Mul", 2}, {"Div", 1}}},
      {testing::ConstantChainModel(), "constant_folding", {{"Add", 1}}},
  };
  for (const Case& c : cases) {
    for (bool identity : {false, true}) {
      SCOPED_TRACE(c.pass + (identity ? " through Identity" : " from Constant nodes"));
      const onnx::ModelProto source = testing::ParseOnnxText(c.text);
      const onnx::ModelProto model = identity ? testing::WeightsThroughIdentity(source)
                                              : testing::WeightsAsConstantNodes(source);
      Transform(testing::Serialize(model), c.pass, /*binary=*/true);
      EXPECT_EQ(OpCountsWithoutWeightNodes(after_), c.ops);
      EXPECT_LT(MaxOutputDiff(), 1e-5);
    }
  }
}

TEST_F(TransformTest, RewritingPassesRemoveTheWeightNodesTheyLeaveUnread) {
  const onnx::ModelProto model =
      testing::WeightsAsConstantNodes(testing::ParseOnnxText(testing::ParallelMatMulModel()));
  TransformRecord record =
      Transform(testing::Serialize(model), "merge_parallel_matmuls", /*binary=*/true);
  EXPECT_EQ(OpCounts(after_).count("Constant"), 0u);
  EXPECT_EQ(RemovedOps(record.passes[0], "Constant").size(), 3u);
}

TEST_F(TransformTest, FoldBatchNormSaysWhyItLeavesEachBatchNormAlone) {
  TransformRecord record = Transform(testing::UnfoldableBatchNormModel(), "fold_batchnorm");
  const PassRecord& pass = record.passes[0];
  EXPECT_TRUE(pass.changes.empty());
  EXPECT_EQ(pass.candidates, (std::map<std::string, int64_t>{{"BatchNormalization", 4}}));
  EXPECT_EQ(SkipNotes(pass),
            (Strings{"fold_batchnorm: 1 of 4 BatchNormalization nodes not folded: its input is not "
                     "computed by a Conv (first 'y1': 'r1' is computed by Relu 'r1')",
                     "fold_batchnorm: 1 of 4 BatchNormalization nodes not folded: it is in "
                     "training mode (first 'y2': it outputs running statistics 'm2')",
                     "fold_batchnorm: 1 of 4 BatchNormalization nodes not folded: its Conv output "
                     "has other readers (first 'y3': 'c3' is a graph output)",
                     "fold_batchnorm: 1 of 4 BatchNormalization nodes not folded: its Conv weight "
                     "is not a constant (first 'y4': 'wc' is computed by Mul 'wc')"}));
}

TEST_F(TransformTest, APassWithoutCandidatesSaysSo) {
  TransformRecord record = Transform(testing::IdentityModel(), "div_to_mul,fold_batchnorm");
  EXPECT_EQ(SkipNotes(record.passes[0]), Strings{"div_to_mul: no Div node in the main graph"});
  EXPECT_EQ(SkipNotes(record.passes[1]),
            Strings{"fold_batchnorm: no BatchNormalization node in the main graph"});
}

TEST_F(TransformTest, EveryPassRecordsItsSkippedCandidates) {
  // One reason from each pass, on the models of its own tests.
  struct Case {
    std::string text;
    std::string pass;
    std::string note;
  };
  const std::vector<Case> cases = {
      {testing::MatMulAddModel(), "fuse_matmul_add",
       "fuse_matmul_add: 1 of 2 MatMul nodes not fused: its input is not known to be 2-D (Gemm "
       "takes only matrices) (first 'm3': 'x3' has rank 3)"},
      {testing::DivModel(), "div_to_mul",
       "div_to_mul: 1 of 3 Div nodes not rewritten: its divisor holds 0 or a non-finite value "
       "(first 'w': 'zeros')"},
      {testing::ConstantChainModel(), "constant_folding:max_elements=3",
       "constant_folding: 1 of 1 constant-input node not folded: its result has more than "
       "max_elements=3 elements (first 's')"},
      {testing::IdentityModel(), "eliminate_identity",
       "eliminate_identity: 1 of 3 Identity nodes not removed: it copies a graph input, an "
       "initializer or a graph output into a graph output, whose name must stay (first 'z': 'x' "
       "-> 'z')"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pass);
    TransformRecord record = Transform(c.text, c.pass);
    EXPECT_EQ(SkipNotes(record.passes[0]), Strings{c.note});
  }
}

TEST_F(TransformTest, FuseMatMulAddMakesGemmOnlyForMatrices) {
  TransformRecord record = Transform(testing::MatMulAddModel(), "fuse_matmul_add");
  const PassRecord& pass = record.passes[0];
  EXPECT_EQ(Kinds(pass), (Strings{"changed m", "removed a"}));
  EXPECT_EQ(Marked(pass), Strings{"m"});
  // The 3-D MatMul + Add stays: Gemm takes only matrices.
  EXPECT_EQ(OpCounts(after_),
            (std::map<std::string, int>{{"Gemm", 1}, {"Relu", 1}, {"MatMul", 1}, {"Add", 1}}));
  EXPECT_LT(MaxOutputDiff(), 1e-5);
}

TEST_F(TransformTest, DivToMulRewritesConstantDivisorsWithoutZeros) {
  TransformRecord record = Transform(testing::DivModel(), "div_to_mul");
  EXPECT_EQ(Kinds(record.passes[0]), (Strings{"changed y", "changed z", "removed c2"}));
  EXPECT_EQ(Marked(record.passes[0]), (Strings{"y", "z"}));
  EXPECT_EQ(OpCounts(after_)["Mul"], 2);
  EXPECT_EQ(OpCounts(after_)["Div"], 1);  // the divisor holding 0
  EXPECT_LT(MaxOutputDiff(), 1e-6);
}

TEST_F(TransformTest, LegacyIrInitializerInputsAreConstantsAndStayListed) {
  // IR 3 lists initializers among the graph inputs; they are constants there (as in ONNX Runtime),
  // and the output must list the initializers it has, the new reciprocal included.
  std::string text = testing::DivModel();
  text.replace(0, text.find('\n'), "<ir_version: 3, opset_import: [\"\" : 7]>");
  onnx::ModelProto legacy = testing::ParseOnnxText(text);
  for (const onnx::TensorProto& init : legacy.graph().initializer()) {
    onnx::ValueInfoProto* input = legacy.mutable_graph()->add_input();
    input->set_name(init.name());
    input->mutable_type()->mutable_tensor_type()->set_elem_type(init.data_type());
    input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  }
  TransformRecord record = Transform(testing::Serialize(legacy), "div_to_mul", /*binary=*/true);
  EXPECT_EQ(OpCounts(after_)["Mul"], 2);
  Strings inputs;
  for (const onnx::ValueInfoProto& input : after_.graph().input()) inputs.push_back(input.name());
  EXPECT_EQ(inputs, (Strings{"x", "zeros", "c1_reciprocal", "c2_reciprocal"}));
  EXPECT_LT(MaxOutputDiff(), 1e-6);
}

TEST_F(TransformTest, ConstantFoldingEvaluatesChainsInOrt) {
  TransformRecord record = Transform(testing::ConstantChainModel(), "constant_folding");
  const PassRecord& pass = record.passes[0];
  EXPECT_TRUE(pass.preserves_computation);
  EXPECT_EQ(Kinds(pass), (Strings{"removed s", "removed t", "removed c3"}));
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Add", 1}}));
  ASSERT_EQ(after_.graph().initializer_size(), 1);  // c1, c2 no longer read
  EXPECT_EQ(after_.graph().initializer(0).name(), "t");
  EXPECT_EQ(MaxOutputDiff(), 0.0);
}

TEST_F(TransformTest, ConstantFoldingMaxElementsKeepsLargeResults) {
  TransformRecord record =
      Transform(testing::ConstantChainModel(), "constant_folding:max_elements=3");
  EXPECT_EQ(record.passes[0].spec.params.at("max_elements"), "3");
  EXPECT_EQ(OpCounts(after_)["Add"], 2);  // s would have 6 elements
  EXPECT_EQ(MaxOutputDiff(), 0.0);
}

TEST_F(TransformTest, EliminateIdentityKeepsGraphOutputNames) {
  TransformRecord record = Transform(testing::IdentityModel(), "eliminate_identity");
  const PassRecord& pass = record.passes[0];
  EXPECT_TRUE(pass.preserves_computation);
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Relu", 1}, {"Identity", 1}}));
  // Relu reads x directly and produces the graph output y itself; z = Identity(x) must stay.
  EXPECT_EQ(after_.graph().node(0).op_type(), "Relu");
  EXPECT_EQ(after_.graph().node(0).input(0), "x");
  EXPECT_EQ(after_.graph().node(0).output(0), "y");
  EXPECT_EQ(after_.graph().node(0).name(), "r");  // named after its original output when marked
  EXPECT_EQ(Marked(pass), Strings{"r"});
  EXPECT_EQ(std::count_if(pass.changes.begin(), pass.changes.end(),
                          [](const NodeChange& c) { return c.kind == "removed"; }),
            3);
  EXPECT_EQ(MaxOutputDiff(), 0.0);
}

TEST_F(TransformTest, MergeParallelMatMulsConcatenatesAndSplits) {
  for (int opset : {11, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    TransformRecord record =
        Transform(testing::ParallelMatMulModel(opset), "merge_parallel_matmuls");
    const PassRecord& pass = record.passes[0];
    EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{
                                    {"MatMul", 1}, {"Split", 1}, {"Relu", 1}, {"Sigmoid", 1}}));
    EXPECT_EQ(Marked(pass).size(), 2u);
    EXPECT_EQ(Kinds(pass).size(), 5u);  // 3 removed, 2 created
    EXPECT_LT(MaxOutputDiff(), 1e-5);
  }
}

TEST_F(TransformTest, PassesChainInOrderAndMarkSeparately) {
  std::string text = testing::ConvBatchNormModel();
  text.replace(text.find("  y = Relu (n)"), 14, "  i = Identity (n)\n  y = Relu (i)");
  TransformRecord record = Transform(text, "eliminate_identity,fold_batchnorm");
  ASSERT_EQ(record.passes.size(), 2u);
  EXPECT_EQ(OpCounts(after_), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
  EXPECT_EQ(Marked(record.passes[0]), Strings{"y"});  // the Relu, rewired
  EXPECT_EQ(Marked(record.passes[1]), Strings{"c"});
  EXPECT_LT(MaxOutputDiff(), 1e-5);
}

TEST(PassSpecTest, ParsesListsAndParameters) {
  Result<std::vector<PassSpec>> specs =
      ParsePassSpecs({"eliminate_identity,div_to_mul", "constant_folding:max_elements=10"});
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[1].name, "div_to_mul");
  EXPECT_EQ((*specs)[2].params.at("max_elements"), "10");
}

TEST(PassSpecTest, RejectsUnknownNamesParametersAndValues) {
  for (const char* text : {"fold_batchnrom", "div_to_mul:k=1", "constant_folding:max_elements=x",
                           "constant_folding:max_elements", "a,", ""}) {
    Result<std::vector<PassSpec>> specs = ParsePassSpecs({text});
    EXPECT_EQ(specs.status().code(), StatusCode::kInvalidArgument) << text;
  }
  EXPECT_NE(ParsePassSpecs({"nope"}).status().message().find("fold_batchnorm"), std::string::npos);
}

TEST(PassSpecTest, SignaturesAreDeterministicAndDistinct) {
  const std::string plain = PassSignature({"constant_folding", {}});
  EXPECT_EQ(plain.size(), 16u);
  EXPECT_EQ(plain, PassSignature({"constant_folding", {}}));
  EXPECT_NE(plain, PassSignature({"constant_folding", {{"max_elements", "10"}}}));
  EXPECT_NE(PassSignature({"constant_folding", {{"max_elements", "10"}}}),
            PassSignature({"constant_folding", {{"max_elements", "11"}}}));
  EXPECT_NE(plain, PassSignature({"div_to_mul", {}}));
  EXPECT_EQ(plain, Sha256Hex("constant_folding").substr(0, 16));
}

TEST(TransformErrorTest, NamesTheFileOnBadInput) {
  testing::ScopedTempDir dir;
  const fs::path truncated = dir.path() / "truncated.onnx";
  const std::string bytes = testing::Serialize(testing::ParseOnnxText(testing::DivModel()));
  ASSERT_TRUE(WriteFileAtomic(truncated, bytes.substr(0, bytes.size() / 2)).ok());
  Result<TransformRecord> record =
      TransformModelFile(truncated, dir.path() / "out.onnx", {{"div_to_mul", {}}});
  EXPECT_EQ(record.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(record.status().message().find("truncated.onnx"), std::string::npos);
  EXPECT_EQ(
      TransformModelFile(dir.path() / "missing.onnx", dir.path() / "out.onnx", {{"div_to_mul", {}}})
          .status()
          .code(),
      StatusCode::kNotFound);
}

// A weight in a data file is read where it is when a pass needs it (div_to_mul reads c1), and the
// output keeps its data in a file of its own beside it; a data file that is missing is refused
// naming the tensor, with nothing written.
TEST(TransformErrorTest, ExternalWeightsAreReadAndWrittenBesideTheOutput) {
  testing::ScopedTempDir dir;
  onnx::ModelProto model = testing::ParseOnnxText(testing::DivModel());
  onnx::TensorProto* c1 = model.mutable_graph()->mutable_initializer(0);
  c1->clear_float_data();
  c1->clear_raw_data();
  c1->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = c1->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  testing::WriteModel(model, dir.path() / "external.onnx");
  Result<TransformRecord> missing = TransformModelFile(
      dir.path() / "external.onnx", dir.path() / "out.onnx", {{"div_to_mul", {}}});
  EXPECT_EQ(missing.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(missing.status().message().find("tensor 'c1'"), std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("weights.bin does not exist"), std::string::npos)
      << missing.status().message();
  EXPECT_FALSE(fs::exists(dir.path() / "out.onnx"));

  const float values[3] = {3.0f, 7.0f, 0.3f};
  std::ofstream(dir.path() / "weights.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(values), sizeof(values));
  Result<TransformRecord> record = TransformModelFile(
      dir.path() / "external.onnx", dir.path() / "out.onnx", {{"div_to_mul", {}}});
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_FALSE(record->passes[0].changes.empty());  // the Div by c1 became a Mul
  EXPECT_TRUE(fs::exists(dir.path() / "out.onnx"));
}

}  // namespace
}  // namespace convgate::transform
