#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "convgate/inputs/dataset.h"
#include "convgate/inputs/prng.h"
#include "inputs/test_util.h"

namespace convgate::inputs {
namespace {

using test_util::Fix;
using test_util::Input;
using test_util::MakeSignature;
using test_util::ShapelessInput;
using test_util::Sym;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Dataset Generate(const Signature& signature, const InputOptions& options = {}) {
  Result<Dataset> dataset = GenerateDataset(signature, options);
  if (!dataset.ok()) ADD_FAILURE() << dataset.status().ToString();
  return dataset.ok() ? std::move(dataset).value() : Dataset();
}

Status GenerateError(const Signature& signature, const InputOptions& options) {
  Result<Dataset> dataset = GenerateDataset(signature, options);
  return dataset.status();
}

// A streamed dataset makes each sample alone, exactly as GenerateDataset makes it among the others.
TEST(GenerateDataset, StreamedSamplesAreTheSamplesGenerated) {
  const Signature signature = MakeSignature({
      Input("ids", DType::kInt64, {Fix(1), Fix(5)}),
      Input("image", DType::kFloat32, {Fix(1), Fix(3), Fix(4), Fix(4)}),
      Input("flag", DType::kBool, {Fix(2)}),
  });
  InputOptions options;
  options.samples = 4;
  options.seed = 7;
  const Dataset held = Generate(signature, options);
  Result<Dataset> streamed = GenerateStreamedDataset(signature, options);
  ASSERT_TRUE(streamed.ok()) << streamed.status().ToString();
  EXPECT_EQ(streamed->samples.size(), 1u);
  EXPECT_EQ(streamed->size(), 4u);
  EXPECT_EQ(streamed->origin, held.origin);
  EXPECT_EQ(streamed->notes, held.notes);
  std::vector<DataFile> files;
  for (size_t idx : {3u, 1u, 2u, 1u}) {
    Result<TensorMap> made = streamed->make(idx, files);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    for (const auto& entry : held.samples[idx]) {
      const std::span<const std::byte> a = entry.tensor.bytes();
      const std::span<const std::byte> b = made->Find(entry.name)->bytes();
      EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()))
          << "sample " << idx << " input " << entry.name;
    }
  }
  const std::span<const std::byte> a = held.samples[0].Find("image")->bytes();
  const std::span<const std::byte> b = streamed->samples[0].Find("image")->bytes();
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  EXPECT_TRUE(files.empty());
}

TEST(GenerateDataset, ShapesFromDeclarationDimsAndDefaults) {
  const Signature signature = MakeSignature({
      Input("ids", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("mask", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("image", DType::kFloat32, {Sym("batch"), Fix(3), Dim::Unknown(), Fix(4)}),
  });
  InputOptions options;
  options.dim_per_symbol["seq"] = 7;
  const Dataset dataset = Generate(signature, options);
  ASSERT_EQ(dataset.samples.size(), 1u);
  const TensorMap& sample = dataset.samples[0];
  EXPECT_EQ(sample.Names(), (std::vector<std::string>{"ids", "mask", "image"}));
  EXPECT_EQ(sample.Find("ids")->shape(), Shape::Of({1, 7}));
  EXPECT_EQ(sample.Find("mask")->shape(), Shape::Of({1, 7}));
  EXPECT_EQ(sample.Find("image")->shape(), Shape::Of({1, 3, 1, 4}));
  // One note for 'batch' although three inputs use it, one for the unnamed dim.
  EXPECT_THAT(dataset.notes,
              ElementsAre("input 'ids' dim 0 ('batch') unbound: used 1; bind it with --dim batch=N",
                          "input 'image' dim 2 unknown: used 1; set the shape with --shape "
                          "image:DIMS"));
}

// optimum's decoder-with-past export: the mask's dim is the sum of the past's and the ids'
// lengths, derived from them (bound or defaulted), and the parts are valid --dim symbols.
TEST(GenerateDataset, ExpressionDimsAreDerivedFromTheirParts) {
  const Signature signature = MakeSignature({
      Input("input_ids", DType::kInt64, {Sym("batch_size"), Sym("sequence_length")}),
      Input("attention_mask", DType::kInt64,
            {Sym("batch_size"), Sym("past_sequence_length + sequence_length")}),
      Input("past.0.key", DType::kFloat32,
            {Sym("batch_size"), Fix(2), Sym("past_sequence_length"), Fix(8)}),
  });
  InputOptions options;
  options.dim_per_symbol["sequence_length"] = 5;
  Dataset dataset = Generate(signature, options);
  ASSERT_EQ(dataset.samples.size(), 1u);
  EXPECT_EQ(dataset.samples[0].Find("attention_mask")->shape(), Shape::Of({1, 6}));
  EXPECT_EQ(dataset.samples[0].Find("past.0.key")->shape(), Shape::Of({1, 2, 1, 8}));
  EXPECT_THAT(dataset.notes,
              ::testing::Contains(HasSubstr("('past_sequence_length + sequence_length') derived "
                                            "from its parts: 6 (past_sequence_length 1, "
                                            "sequence_length 5)")));
  options.dim_per_symbol["past_sequence_length"] = 3;
  dataset = Generate(signature, options);
  EXPECT_EQ(dataset.samples[0].Find("attention_mask")->shape(), Shape::Of({1, 8}));
  EXPECT_EQ(dataset.samples[0].Find("past.0.key")->shape(), Shape::Of({1, 2, 3, 8}));
}

// What the graph shows (InputHint) shapes generated inputs where no flag says otherwise: ids
// inside their table, masks of ones, the channels the first Conv takes; flags still win.
TEST(GenerateDataset, GraphHintsShapeTheValuesUnlessAFlagSaysOtherwise) {
  TensorInfo ids = Input("input_ids", DType::kInt64, {Sym("batch"), Sym("seq")});
  ids.hint.index_rows = 400;
  ids.hint.index_source = "Gather 'g' on 'wte' (400 rows)";
  TensorInfo mask = Input("attention_mask", DType::kInt64, {Sym("batch"), Sym("seq")});
  mask.hint.mask = true;
  TensorInfo pixels =
      Input("pixel_values", DType::kFloat32, {Sym("batch"), Sym("num_channels"), Fix(4), Fix(4)});
  pixels.hint.channels = 3;
  pixels.hint.channels_source = "Conv 'c' (weight 'w' [8, 3, 2, 2])";
  const Signature signature = MakeSignature({ids, mask, pixels});
  InputOptions options;
  options.dim_per_symbol["seq"] = 64;
  Dataset dataset = Generate(signature, options);
  ASSERT_EQ(dataset.samples.size(), 1u);
  const Tensor& drawn = *dataset.samples[0].Find("input_ids");
  double top = 0;
  for (int64_t k = 0; k < drawn.num_elements(); ++k) top = std::max(top, drawn.GetDouble(k));
  EXPECT_GT(top, 1.0);  // 64 draws from [0, 399]: far from the old [0, 1]
  EXPECT_LE(top, 399.0);
  const Tensor& ones = *dataset.samples[0].Find("attention_mask");
  for (int64_t k = 0; k < ones.num_elements(); ++k) EXPECT_EQ(ones.GetDouble(k), 1.0);
  EXPECT_EQ(dataset.samples[0].Find("pixel_values")->shape(), Shape::Of({1, 3, 4, 4}));
  EXPECT_THAT(dataset.notes, ::testing::Contains(HasSubstr(
                                 "input 'input_ids' takes values in [0, 399]: it indexes Gather")));
  EXPECT_THAT(dataset.notes, ::testing::Contains(HasSubstr("input 'attention_mask' is ones")));
  EXPECT_THAT(dataset.notes, ::testing::Contains(HasSubstr("('num_channels'): used 3")));

  // A global --fill or --val-range, a per-input one, or --dim: the flags decide.
  options.fill_per_input["attention_mask"] = Fill::kUniform;
  options.range_per_input["input_ids"] = ValueRange{0.0, 1.0};
  options.dim_per_symbol["num_channels"] = 1;
  dataset = Generate(signature, options);
  const Tensor& small = *dataset.samples[0].Find("input_ids");
  for (int64_t k = 0; k < small.num_elements(); ++k) EXPECT_LE(small.GetDouble(k), 1.0);
  EXPECT_EQ(dataset.samples[0].Find("pixel_values")->shape(), Shape::Of({1, 1, 4, 4}));
  const Tensor& bits = *dataset.samples[0].Find("attention_mask");
  double zeros = 0;
  for (int64_t k = 0; k < bits.num_elements(); ++k) zeros += bits.GetDouble(k) == 0.0 ? 1 : 0;
  EXPECT_GT(zeros, 0);  // random bits again
}

// Sizes from the export's config.json (InputHint::dim_defaults) bind the symbols they name, with
// a note saying where they came from; --dim still wins.
TEST(GenerateDataset, ConfigSizesBindSymbolsUnlessADimFlagDoes) {
  TensorInfo pixels =
      Input("pixel_values", DType::kFloat32, {Sym("batch"), Fix(3), Sym("height"), Sym("width")});
  pixels.hint.dim_defaults = {{2, 32, "config.json beside the model: image_size 32"},
                              {3, 32, "config.json beside the model: image_size 32"}};
  const Signature signature = MakeSignature({pixels});
  InputOptions options;
  Dataset dataset = Generate(signature, options);
  EXPECT_EQ(dataset.samples[0].Find("pixel_values")->shape(), Shape::Of({1, 3, 32, 32}));
  EXPECT_THAT(dataset.notes,
              ::testing::Contains(HasSubstr("input 'pixel_values' dim 2 ('height'): used 32, from "
                                            "config.json beside the model: image_size 32")));
  options.dim_per_symbol["width"] = 8;
  dataset = Generate(signature, options);
  EXPECT_EQ(dataset.samples[0].Find("pixel_values")->shape(), Shape::Of({1, 3, 32, 8}));
}

TEST(GenerateDataset, ShapeOverrideWinsAndBindsSymbolsForOtherInputs) {
  const Signature signature = MakeSignature({
      Input("ids", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("mask", DType::kInt64, {Sym("batch"), Sym("seq")}),
      ShapelessInput("extra", DType::kFloat32),
  });
  InputOptions options;
  options.shape_per_input.insert_or_assign("ids", Shape::Of({2, 5}));
  options.shape_per_input.insert_or_assign("extra", Shape::Of({4}));
  const Dataset dataset = Generate(signature, options);
  ASSERT_EQ(dataset.samples.size(), 1u);
  EXPECT_EQ(dataset.samples[0].Find("ids")->shape(), Shape::Of({2, 5}));
  EXPECT_EQ(dataset.samples[0].Find("mask")->shape(), Shape::Of({2, 5}));
  EXPECT_EQ(dataset.samples[0].Find("extra")->shape(), Shape::Of({4}));
  EXPECT_TRUE(dataset.notes.empty());
}

TEST(GenerateDataset, ShapeOverrideMustMatchTheDeclaration) {
  const Signature signature =
      MakeSignature({Input("x", DType::kFloat32, {Sym("batch"), Fix(3), Fix(224), Fix(224)})});
  InputOptions options;
  options.shape_per_input.insert_or_assign("x", Shape::Of({1, 3, 224}));
  Status status = GenerateError(signature, options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "--shape for input 'x' is [1, 3, 224] but the model declares [batch, 3, 224, 224]");

  options.shape_per_input.insert_or_assign("x", Shape::Of({1, 4, 224, 224}));
  status = GenerateError(signature, options);
  EXPECT_EQ(status.message(),
            "--shape for input 'x' is [1, 4, 224, 224] but the model declares "
            "[batch, 3, 224, 224]");
}

TEST(GenerateDataset, ConflictingSymbolBindingsAreRejected) {
  const Signature signature = MakeSignature({
      Input("a", DType::kFloat32, {Sym("batch")}),
      Input("b", DType::kFloat32, {Sym("batch")}),
  });
  InputOptions options;
  options.dim_per_symbol["batch"] = 4;
  options.shape_per_input.insert_or_assign("a", Shape::Of({2}));
  Status status = GenerateError(signature, options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "--shape a:2 sets dim 'batch' to 2, but --dim batch=4 sets it to 4");

  options.dim_per_symbol.clear();
  options.shape_per_input.insert_or_assign("b", Shape::Of({3}));
  status = GenerateError(signature, options);
  EXPECT_EQ(status.message(), "--shape b:3 sets dim 'batch' to 3, but --shape a:2 sets it to 2");
}

TEST(GenerateDataset, ShapelessInputNeedsAShape) {
  Status status = GenerateError(MakeSignature({ShapelessInput("x", DType::kFloat32)}), {});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "input 'x' declares no shape; give one with --shape x:DIMS");
}

TEST(GenerateDataset, UnknownNamesAndSymbolsAreErrors) {
  const Signature signature = MakeSignature({
      Input("ids", DType::kInt64, {Sym("batch"), Sym("seq")}),
      Input("mask", DType::kInt64, {Sym("batch"), Sym("seq")}),
  });
  InputOptions options;
  options.dim_per_symbol["btach"] = 2;
  Status status = GenerateError(signature, options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "--dim names symbol 'btach', which no input uses; the model's symbolic dims are: "
            "batch, seq");

  options = InputOptions();
  options.fill_per_input["input_ids"] = Fill::kOnes;
  status = GenerateError(signature, options);
  EXPECT_EQ(status.message(),
            "--fill names input 'input_ids', which the model does not have; "
            "its inputs are: ids, mask");
  options = InputOptions();
  options.range_per_input["x"] = ValueRange{0, 2};
  EXPECT_THAT(GenerateError(signature, options).message(), HasSubstr("--val-range names input"));
  options = InputOptions();
  options.shape_per_input.insert_or_assign("x", Shape::Of({1}));
  EXPECT_THAT(GenerateError(signature, options).message(), HasSubstr("--shape names input 'x'"));

  options = InputOptions();
  options.dim_per_symbol["batch"] = 1;
  status = GenerateError(MakeSignature({Input("x", DType::kFloat32, {Fix(2)})}), options);
  EXPECT_EQ(status.message(),
            "--dim names symbol 'batch', which no input uses; the model's "
            "inputs have no symbolic dims");
}

// Issue 10: an input too large to make is the model's problem when its own dims say so
// (Unimplemented: exit 3), a usage error when a --dim made it so (InvalidArgument: exit 2).
TEST(GenerateDataset, TooManyElementsIsTheModelsProblemUnlessAFlagCausedIt) {
  Status status = GenerateError(
      MakeSignature({Input("x", DType::kFloat32, {Fix(int64_t{1} << 31), Fix(int64_t{1} << 30)})}),
      {});
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "input 'x': shape [2147483648, 1073741824] has more than 2^60 elements as the model "
            "declares it: convgate cannot generate it");

  InputOptions options;
  options.dim_per_symbol["batch"] = int64_t{1} << 62;
  status =
      GenerateError(MakeSignature({Input("x", DType::kFloat32, {Sym("batch"), Fix(4)})}), options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("more than 2^60 elements"), std::string::npos)
      << status.message();
}

TEST(GenerateDataset, RejectsTypesConvgateCannotHoldAndZeroSamples) {
  TensorInfo wave = ShapelessInput("wave", DType::kFloat32);
  wave.dtype = std::nullopt;
  wave.type_name = "complex64";
  wave.has_shape = true;
  Status status = GenerateError(MakeSignature({wave}), {});
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);  // the model's, not a usage error
  EXPECT_EQ(status.message(), "input 'wave' has type complex64, which convgate cannot generate");

  InputOptions options;
  options.samples = 0;
  status = GenerateError(MakeSignature({Input("x", DType::kFloat32, {})}), options);
  EXPECT_EQ(status.message(), "--samples must be at least 1, got 0");
}

TEST(GenerateDataset, OriginAndSampleCount) {
  InputOptions options;
  options.samples = 3;
  options.seed = 9;
  options.fill_per_input["m"] = Fill::kOnes;
  const Signature signature =
      MakeSignature({Input("x", DType::kFloat32, {Fix(2)}), Input("m", DType::kBool, {Fix(2)})});
  const Dataset dataset = Generate(signature, options);
  EXPECT_EQ(dataset.samples.size(), 3u);
  EXPECT_EQ(dataset.origin, "generated (seed 9, 3 samples): x uniform [0, 1); m ones");
  EXPECT_EQ(Generate(signature).origin,
            "generated (seed 1, 1 sample): x uniform [0, 1); m random bits");
  const Signature ints = MakeSignature({Input("ids", DType::kInt64, {Fix(2)})});
  EXPECT_EQ(Generate(ints).origin, "generated (seed 1, 1 sample): ids uniform integers [0, 1]");
  options.fill = Fill::kNormal;
  options.fill_per_input.clear();
  EXPECT_EQ(Generate(ints, options).origin.substr(0, 46),
            "generated (seed 9, 3 samples): ids normal mean");
}

TEST(GenerateDataset, EachSampleAndInputHasItsOwnStream) {
  const Signature one = MakeSignature({Input("x", DType::kFloat32, {Fix(16)})});
  const Signature two = MakeSignature(
      {Input("x", DType::kFloat32, {Fix(16)}), Input("y", DType::kFloat32, {Fix(16)})});
  InputOptions options;
  options.samples = 2;
  const Dataset a = Generate(one, options);
  const Dataset b = Generate(two, options);
  const Dataset again = Generate(two, options);
  ASSERT_EQ(b.samples.size(), 2u);
  // Adding input y leaves x's values unchanged; the same options reproduce the same bytes.
  EXPECT_TRUE(a.samples[1].Find("x")->BitwiseEquals(*b.samples[1].Find("x")));
  EXPECT_TRUE(b.samples[1].Find("y")->BitwiseEquals(*again.samples[1].Find("y")));
  EXPECT_FALSE(b.samples[0].Find("x")->BitwiseEquals(*b.samples[1].Find("x")));
  EXPECT_FALSE(b.samples[0].Find("x")->BitwiseEquals(*b.samples[0].Find("y")));
  options.seed = 2;
  EXPECT_FALSE(Generate(one, options).samples[0].Find("x")->BitwiseEquals(*a.samples[0].Find("x")));

  // The documented stream: sample 1, input 1 draws from Prng(DeriveSeed(seed, 1, 1)).
  Prng prng(DeriveSeed(1, 1, 1));
  EXPECT_EQ(b.samples[1].Find("y")->data<float>()[0], static_cast<float>(prng.NextDouble()));
}

}  // namespace
}  // namespace convgate::inputs
