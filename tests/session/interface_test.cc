// How a target whose interface differs takes the source's data set: --map, the ':0' rule,
// position with equal shapes, NHWC transposition both ways, output selection; and inputs saved
// by position (np.savez(f, x)) bound to a model's names.
#include "convgate/session/interface.h"

#include <gtest/gtest.h>

#include "convgate/session/positional.h"
#include "testing/tensor_info.h"

namespace convgate::session {
namespace {

using testing::Declared;

Tensor Iota(std::vector<int64_t> dims) {
  Tensor tensor = Tensor::Allocate(DType::kFloat32, Shape::Make(dims).value()).value();
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) tensor.SetDouble(idx, idx);
  return tensor;
}

Signature Inputs(std::vector<TensorInfo> inputs) {
  Signature signature;
  signature.inputs = std::move(inputs);
  return signature;
}

TEST(InterfaceTest, TransposeRoundTrips) {
  const Tensor nchw = Iota({2, 3, 4, 5});
  const Tensor nhwc = TransposeLayout(nchw, true).value();
  EXPECT_EQ(nhwc.shape().dims(), (std::vector<int64_t>{2, 4, 5, 3}));
  // (n 1, c 2, h 3, w 4) in NCHW is (n 1, h 3, w 4, c 2) in NHWC.
  EXPECT_EQ(nhwc.GetDouble(((1 * 4 + 3) * 5 + 4) * 3 + 2),
            nchw.GetDouble(((1 * 3 + 2) * 4 + 3) * 5 + 4));
  EXPECT_TRUE(TransposeLayout(nhwc, false).value().BitwiseEquals(nchw));
  EXPECT_FALSE(TransposeLayout(Iota({2, 3}), true).ok());
}

TEST(InterfaceTest, BindsByMapSuffixAndPosition) {
  TensorMap sample;
  sample.Append("x", Iota({1, 3, 2, 2}));
  sample.Append("scale", Iota({1, 1}));
  sample.Append("ids", Iota({1, 4}));
  const Signature target = Inputs({
      Declared("input.1", DType::kFloat32,
               {Dim::Fixed(1), Dim::Fixed(3), Dim::Fixed(2), Dim::Fixed(2)}),
      Declared("scale:0", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(1)}),
      Declared("tokens", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(4)}),
  });
  InterfaceOptions options;
  ASSERT_TRUE(AddMapping("x=input.1", options).ok());
  SideRecord record;
  Result<InterfaceBinding> binding = InterfaceBinding::Bind(options, sample, target, record);
  ASSERT_TRUE(binding.ok()) << binding.status().ToString();
  EXPECT_FALSE(binding->identity());
  const TensorMap inputs = binding->TargetInputs(sample).value();
  EXPECT_EQ(inputs.Names(), (std::vector<std::string>{"input.1", "scale:0", "tokens"}));
  ASSERT_EQ(record.notes.size(), 3u);
  EXPECT_NE(record.notes[0].find("--map"), std::string::npos);
  EXPECT_NE(record.notes[1].find("':0'"), std::string::npos);
  EXPECT_NE(record.notes[2].find("position"), std::string::npos);
}

TEST(InterfaceTest, SuggestsTheLayoutAndMapWhenNothingBinds) {
  TensorMap sample;
  sample.Append("x", Iota({1, 3, 8, 8}));
  const Signature nhwc = Inputs({Declared(
      "x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(8), Dim::Fixed(8), Dim::Fixed(3)})});
  SideRecord record;
  const InterfaceOptions none;
  const Result<InterfaceBinding> refused = InterfaceBinding::Bind(none, sample, nhwc, record);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--target-layout nhwc"), std::string::npos)
      << refused.status().ToString();
  InterfaceOptions layout;
  ASSERT_TRUE(AddTargetLayout("nhwc", layout).ok());
  Result<InterfaceBinding> bound = InterfaceBinding::Bind(layout, sample, nhwc, record);
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ(bound->TargetInputs(sample).value().Find("x")->shape().dims(),
            (std::vector<int64_t>{1, 8, 8, 3}));
  // Two inputs, none of the target's names, shapes that differ: --map is the way.
  TensorMap two;
  two.Append("a", Iota({1, 2}));
  const Signature other = Inputs({Declared("b", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(5)})});
  const Result<InterfaceBinding> unbound = InterfaceBinding::Bind(none, two, other, record);
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("--map a=TARGET_NAME"), std::string::npos);
  InterfaceOptions bad;
  ASSERT_TRUE(AddMapping("a=c", bad).ok());
  EXPECT_EQ(InterfaceBinding::Bind(bad, two, other, record).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(InterfaceTest, OutputsTakeTheSourceNamesAndLayout) {
  InterfaceOptions options;
  ASSERT_TRUE(AddTargetLayout("nhwc", options).ok());
  options.exclude_outputs = {"debug"};
  InterfaceBinding binding = InterfaceBinding::OutputsOnly(options);
  TensorMap source;
  source.Append("heat", Iota({1, 2, 3, 4}));
  source.Append("debug", Iota({2}));
  TensorMap target;
  target.Append("heat:0", TransposeLayout(Iota({1, 2, 3, 4}), true).value());
  target.Append("debug", Iota({2}));
  SideRecord record;
  binding.ToSourceNames(target, source, record, true);
  ASSERT_NE(target.Find("heat"), nullptr);
  EXPECT_TRUE(target.Find("heat")->BitwiseEquals(*source.Find("heat")));
  EXPECT_EQ(record.output_matching, "map");
  EXPECT_EQ(record.output_renames, std::vector<std::string>{"heat:0 -> heat (NHWC -> NCHW)"});
  binding.Select(target);
  EXPECT_EQ(target.Names(), std::vector<std::string>{"heat"});
  EXPECT_FALSE(binding.CheckOutputNames({"heat"}, {}).ok());  // "debug" is not the source's
}

TEST(PositionalInputsTest, NumpyNamesBindByPosition) {
  inputs::Dataset dataset;
  dataset.origin = "inputs.npz";
  TensorMap sample;
  sample.Append("arr_1", Iota({1, 2}));
  sample.Append("arr_0", Iota({1, 3}));
  dataset.samples.push_back(std::move(sample));
  const Signature signature =
      Inputs({Declared("x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(3)}),
              Declared("y", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(2)})});
  ASSERT_TRUE(BindPositionalInputs(dataset, signature).ok());
  EXPECT_EQ(dataset.samples[0].Names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(dataset.samples[0].Find("x")->num_elements(), 3);
  ASSERT_EQ(dataset.notes.size(), 1u);
  EXPECT_NE(dataset.notes[0].find("arr_0 -> x"), std::string::npos);
  const Signature one = Inputs({Declared("x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(3)})});
  inputs::Dataset two;
  two.origin = "two.npz";
  TensorMap pair;
  pair.Append("arr_0", Iota({1}));
  pair.Append("arr_1", Iota({1}));
  two.samples.push_back(std::move(pair));
  const Status refused = BindPositionalInputs(two, one);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("two.npz"), std::string::npos);
}

}  // namespace
}  // namespace convgate::session
