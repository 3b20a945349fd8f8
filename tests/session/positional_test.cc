// Matching a side that works by position (TorchScript) to one that works by name, without
// libtorch: the renaming, the dtypes assumed for untyped inputs, and the checks' messages.
#include "convgate/session/positional.h"

#include <gtest/gtest.h>

namespace convgate::session {
namespace {

Tensor Floats(std::vector<float> values) {
  return Tensor::FromVector<float>(DType::kFloat32,
                                   Shape::Of({static_cast<int64_t>(values.size())}), values);
}

TensorMap Map(const std::vector<std::string>& names) {
  TensorMap map;
  float value = 1.0f;
  for (const std::string& name : names) map.InsertOrAssign(name, Floats({value++}));
  return map;
}

TensorInfo Untyped(const std::string& name) {
  TensorInfo info;
  info.name = name;
  info.type_name = std::string(kUntypedTensor);
  return info;
}

SideRecord TorchRecord() {
  SideRecord record;
  record.role = "source";
  record.backend = "torch";
  return record;
}

TEST(Positional, OutputsTakeTheOtherSidesNamesInOrder) {
  TensorMap positional = Map({"output_0", "output_1"});
  const TensorMap named = Map({"logits", "boxes"});
  SideRecord record = TorchRecord();
  EXPECT_FALSE(MatchOutputsByPosition(positional, named, record, "target", true).has_value());
  EXPECT_EQ(positional.Names(), (std::vector<std::string>{"logits", "boxes"}));
  // The values travel with their position: output_1 (2.0) is now boxes.
  EXPECT_EQ(positional.Find("boxes")->data<float>()[0], 2.0f);
  EXPECT_EQ(record.output_matching, "position");
  EXPECT_EQ(record.output_renames,
            (std::vector<std::string>{"output_0 -> logits", "output_1 -> boxes"}));
  ASSERT_EQ(record.notes.size(), 1u);
  EXPECT_NE(record.notes[0].find("matched by position to the target's (torch names none)"),
            std::string::npos)
      << record.notes[0];
}

TEST(Positional, LaterSamplesAreRenamedWithoutRecordingAgain) {
  SideRecord record = TorchRecord();
  for (bool first : {true, false}) {
    TensorMap positional = Map({"output_0"});
    EXPECT_FALSE(MatchOutputsByPosition(positional, Map({"y"}), record, "target", first));
    EXPECT_TRUE(positional.Contains("y"));
  }
  EXPECT_EQ(record.output_renames.size(), 1u);
  EXPECT_EQ(record.notes.size(), 1u);
}

TEST(Positional, DictOutputsWithTheOtherSidesNamesMatchByName) {
  // Order differs on purpose: names decide when the positional side has the same ones.
  TensorMap positional = Map({"b", "a"});
  SideRecord record = TorchRecord();
  EXPECT_FALSE(MatchOutputsByPosition(positional, Map({"a", "b"}), record, "target", true));
  EXPECT_EQ(positional.Names(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(record.output_matching, "name");
  EXPECT_TRUE(record.output_renames.empty());
}

TEST(Positional, ACountMismatchIsAStructureFailureNamingBothSides) {
  TensorMap positional = Map({"output_0"});
  SideRecord record = TorchRecord();
  std::optional<std::string> failure =
      MatchOutputsByPosition(positional, Map({"logits", "boxes"}), record, "target", true);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(*failure,
            "outputs cannot be matched by position: the source (torch) names no outputs and "
            "returned 1 (output_0), the target has 2 (logits, boxes)");
  EXPECT_EQ(positional.Names(), std::vector<std::string>{"output_0"});
  EXPECT_EQ(record.output_matching, "position");
}

TEST(Positional, UntypedInputsAreGeneratedAsFloat32WithANote) {
  Signature signature;
  signature.inputs = {Untyped("image")};
  TensorInfo typed = Untyped("ids");
  typed.dtype = DType::kInt64;
  typed.type_name = "int64";
  signature.inputs.push_back(typed);
  EXPECT_TRUE(HasUntypedInputs(signature));
  std::vector<std::string> notes;
  const Signature generated = WithGeneratedTypes(signature, notes);
  EXPECT_EQ(generated.inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(generated.inputs[1].dtype, DType::kInt64);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("input 'image' declares no dtype"), std::string::npos) << notes[0];
}

TEST(Positional, UntypedInputsTakeTheLoadedDtype) {
  Signature signature;
  signature.inputs = {Untyped("ids"), Untyped("absent")};
  inputs::Dataset dataset;
  TensorMap sample;
  sample.InsertOrAssign("ids", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({1}), {7}));
  dataset.samples.push_back(std::move(sample));
  const Signature loaded = WithLoadedTypes(signature, dataset);
  EXPECT_EQ(loaded.inputs[0].dtype, DType::kInt64);
  // Left untyped, so that validating the dataset names the missing input.
  EXPECT_FALSE(loaded.inputs[1].dtype.has_value());
}

TEST(Positional, ShapelessInputsNeedAShapeEach) {
  Signature signature;
  signature.inputs = {Untyped("a"), Untyped("b")};
  inputs::InputOptions options;
  options.shape_per_input["a"] = Shape::Of({1, 3});
  Status status = CheckShapesGiven(signature, options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("missing for input 'b' (give --shape b:DIMS"), std::string::npos)
      << status.message();
  options.shape_per_input["b"] = Shape::Of({2});
  EXPECT_TRUE(CheckShapesGiven(signature, options).ok());
  // A --shape naming no input is left to input generation, whose message names the typo.
  options.shape_per_input.erase("b");
  options.shape_per_input["typo"] = Shape::Of({2});
  EXPECT_TRUE(CheckShapesGiven(signature, options).ok());
}

TEST(Positional, APositionalModelNeedsTheSameNumberOfInputs) {
  Signature signature;
  signature.inputs = {Untyped("x"), Untyped("y")};
  inputs::Dataset dataset;
  dataset.samples.push_back(Map({"image"}));
  Status status = CheckPositionalFits(dataset, signature, "m.pt");
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "the inputs do not fit m.pt: it takes 2 input(s) by position (x, y), but sample 0 has "
            "1 (image)");
  dataset.samples[0] = Map({"p", "q"});  // names do not matter, the count does
  EXPECT_TRUE(CheckPositionalFits(dataset, signature, "m.pt").ok());
}

}  // namespace
}  // namespace convgate::session
