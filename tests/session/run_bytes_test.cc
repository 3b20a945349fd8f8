// --max-run-bytes: what a run holds is estimated from the planned or loaded inputs and the outputs
// the models declare, and a run over the limit is refused naming the figure (issue 10).
#include "convgate/session/run_bytes.h"

#include <gtest/gtest.h>

namespace convgate::session {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TensorInfo Declared(const std::string& name, std::vector<Dim> dims) {
  return TensorInfo{name, DType::kFloat32, "float32", true, std::move(dims)};
}

// float32[1, 1024, 1024, 1024] in, the same out: the 70-byte model of issue 10.
Signature HugeIdentity() {
  const std::vector<Dim> dims = {Dim::Fixed(1), Dim::Fixed(1024), Dim::Fixed(1024),
                                 Dim::Fixed(1024)};
  Signature signature;
  signature.inputs = {Declared("x", dims)};
  signature.outputs = {Declared("y", dims)};
  return signature;
}

// float32[batch, 256] in, float32[batch, 10] and float32[?, 3] out.
Signature Batched() {
  Signature signature;
  signature.inputs = {Declared("x", {Dim::Symbolic("batch"), Dim::Fixed(256)})};
  signature.outputs = {Declared("y", {Dim::Symbolic("batch"), Dim::Fixed(10)}),
                       Declared("z", {Dim::Unknown(), Dim::Fixed(3)})};
  return signature;
}

TEST(RunBytes, InputsAndOutputsOverTheLimitAreRefusedWithTheFigures) {
  const Signature signature = HugeIdentity();
  const std::vector<inputs::PlannedInput> planned = {
      {"x", DType::kFloat32, Shape::Of({1, 1024, 1024, 1024})}};
  const HeldOutputs held{.models = {{&signature, false}}};
  Status status = CheckPlannedRunBytes(planned, 1, held, 5 * kGiB);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "this run needs 8.0 GiB of tensors: its inputs 4.0 GiB (input 'x' "
            "float32[1, 1024, 1024, 1024]) and its outputs 4.0 GiB (largest output 'y' "
            "float32[1, 1024, 1024, 1024]), over the limit of 5.0 GiB (--max-run-bytes; raise it "
            "if the machine can hold that much, or run smaller inputs)");
  EXPECT_TRUE(CheckPlannedRunBytes(planned, 1, held, 8 * kGiB).ok());
  // Without a model whose outputs are known, the inputs alone are named.
  status = CheckPlannedRunBytes(planned, 1, HeldOutputs{}, kGiB);
  EXPECT_EQ(status.message().substr(0, 121),
            "the inputs of this run need 4.0 GiB (input 'x' float32[1, 1024, 1024, 1024]), over "
            "the limit of 1.0 GiB (--max-run-bytes;");
}

TEST(RunBytes, SymbolsAreBoundByTheInputsAndUnknownDimsCountNothing) {
  const Signature signature = Batched();
  const std::vector<inputs::PlannedInput> planned = {
      {"x", DType::kFloat32, Shape::Of({1000, 256})}};
  // 4 samples of 1000 x 256 floats, and one sample's y (1000 x 10 floats); z's size is unknown.
  const int64_t inputs = 4 * 1000 * 256 * 4;
  const int64_t y = 1000 * 10 * 4;
  const HeldOutputs one{.models = {{&signature, false}}};
  EXPECT_TRUE(CheckPlannedRunBytes(planned, 4, one, inputs + y).ok());
  Status status = CheckPlannedRunBytes(planned, 4, one, inputs + y - 1);
  EXPECT_NE(status.message().find("its inputs 3.9 MiB (4 samples; largest input 'x' "
                                  "float32[1000, 256]) and its outputs 39.1 KiB (largest output "
                                  "'y' float32[1000, 10])"),
            std::string::npos)
      << status.message();
  // Outputs kept for every sample (--save-outputs) count once per sample.
  const HeldOutputs kept{.models = {{&signature, true}}};
  EXPECT_FALSE(CheckPlannedRunBytes(planned, 4, kept, inputs + y).ok());
  EXPECT_TRUE(CheckPlannedRunBytes(planned, 4, kept, inputs + 4 * y).ok());
}

TEST(RunBytes, LoadedInputsAndSavedOutputsCount) {
  const Signature signature = Batched();
  inputs::Dataset dataset;
  for (int64_t batch : {2, 8}) {
    TensorMap sample;
    sample.InsertOrAssign(
        "x", std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({batch, 256}))).value());
    dataset.samples.push_back(std::move(sample));
  }
  const int64_t inputs = (2 + 8) * 256 * 4;
  const int64_t largest_y = 8 * 10 * 4;  // the larger sample's outputs
  HeldOutputs held{.models = {{&signature, false}}, .saved_bytes = 1000};
  EXPECT_TRUE(CheckLoadedRunBytes(dataset, held, inputs + largest_y + 1000).ok());
  Status status = CheckLoadedRunBytes(dataset, held, inputs + largest_y + 999);
  EXPECT_NE(status.message().find("(2 samples; largest input 'x' float32[8, 256])"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("largest output 'y' float32[8, 10]"), std::string::npos)
      << status.message();
}

TEST(RunBytes, SavedOutputsAreCountedInBytes) {
  std::vector<TensorMap> samples(2);
  samples[0].InsertOrAssign("a",
                            std::move(Tensor::Allocate(DType::kInt64, Shape::Of({4}))).value());
  samples[1].InsertOrAssign("s",
                            std::move(Tensor::FromStrings(Shape::Of({2}), {"abc", "de"})).value());
  EXPECT_EQ(BytesOf(samples), 32 + 5);
}

}  // namespace
}  // namespace convgate::session
