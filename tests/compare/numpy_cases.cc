#include "compare/numpy_cases.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "compare/test_rng.h"

namespace convgate::compare {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using Rng = TestRng;

Tensor MakeTensor(DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor tensor = std::move(Tensor::Allocate(dtype, shape).value());
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

NumpyCase NewCase(std::string name, DType dtype, Shape shape, Tolerance tolerance) {
  NumpyCase c;
  c.name = std::move(name);
  c.source_dtype = dtype;
  c.target_dtype = dtype;
  c.shape = std::move(shape);
  c.tolerance = tolerance;
  return c;
}

// Source uniform in [-1, 1], target = source + noise of the given amplitude.
NumpyCase Noise(std::string name, DType dtype, Shape shape, double amplitude, uint64_t seed) {
  NumpyCase c = NewCase(std::move(name), dtype, std::move(shape), Tolerance{1e-5, 1e-3});
  Rng rng(seed);
  for (int64_t idx = 0; idx < c.shape.NumElements(); ++idx) {
    c.source.push_back(rng.Uniform(-1.0, 1.0));
    c.target.push_back(c.source.back() + rng.Uniform(-amplitude, amplitude));
  }
  return c;
}

// Twelve orders of magnitude, 5% exact zeros (the relative-error floor), 3% large perturbations.
NumpyCase Magnitudes() {
  NumpyCase c = NewCase("f64_magnitudes", DType::kFloat64, Shape::Of({777}), Tolerance{1e-7, 1e-5});
  Rng rng(2);
  for (int64_t idx = 0; idx < 777; ++idx) {
    const double magnitude = std::pow(10.0, rng.Uniform(-6.0, 6.0));
    const double s = rng.Uniform() < 0.05 ? 0.0 : rng.Uniform(-1.0, 1.0) * magnitude;
    const double relative = rng.Uniform() < 0.03 ? 1e-2 : 1e-5;
    c.source.push_back(s);
    c.target.push_back(s * (1.0 + rng.Uniform(-relative, relative)) + rng.Uniform(0.0, 1e-8));
  }
  return c;
}

// Values on a 1/8 grid, 90% of targets equal, the rest off by k/64: few distinct errors, many ties.
NumpyCase Ties() {
  NumpyCase c = NewCase("f32_ties", DType::kFloat32, Shape::Of({1001}), Tolerance{0.02, 0.0});
  Rng rng(3);
  for (int64_t idx = 0; idx < 1001; ++idx) {
    const double s = std::round(rng.Uniform(-8.0, 8.0) * 8.0) / 8.0;
    const double offset = rng.Uniform() < 0.9 ? 0.0 : std::round(rng.Uniform(-2.5, 2.5)) / 64.0;
    c.source.push_back(s);
    c.target.push_back(s + offset);
  }
  return c;
}

// fp16 rounding of a smooth signal: quantized errors, and fp16 on both sides.
NumpyCase Half() {
  NumpyCase c = NewCase("f16_quantized", DType::kFloat16, Shape::Of({3, 171}), {1e-3, 1e-3});
  Rng rng(4);
  for (int64_t idx = 0; idx < 513; ++idx) {
    c.source.push_back(rng.Uniform(-2.0, 2.0));
    c.target.push_back(c.source.back() + rng.Uniform(-0.005, 0.005));
  }
  return c;
}

// Every kind of non-finite pair, sprinkled over noise.
NumpyCase NonFinite() {
  NumpyCase c = Noise("f32_nonfinite", DType::kFloat32, Shape::Of({10, 20}), 2e-3, 5);
  const std::pair<double, double> kinds[] = {
      {kNaN, kNaN}, {kInf, kInf}, {-kInf, -kInf}, {0.5, kNaN},  {0.5, kInf},
      {0.5, -kInf}, {kNaN, 0.25}, {kInf, -kInf},  {kInf, kNaN}, {-kInf, 3.0},
  };
  Rng rng(6);
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (const auto& [s, t] : kinds) {
      const auto flat = static_cast<size_t>(rng.Next() % 200);
      c.source[flat] = s;
      c.target[flat] = t;
    }
  }
  return c;
}

// atol = rtol = 0 with zeros in the source: every failure is allowed 0, so the worst element is
// decided by |t - s| alone.
NumpyCase ZeroTolerance() {
  NumpyCase c = NewCase("f64_zero_tolerance", DType::kFloat64, Shape::Of({2, 3}), {0.0, 0.0});
  c.source = {0.0, 1.0, 0.0, -2.0, 0.0, 3.0};
  c.target = {0.0, 1.5, -0.25, -2.0, 0.5, 3.5};
  return c;
}

// An fp16 conversion of an fp32 output, with values beyond fp16's range (introduced Inf).
NumpyCase Fp16Target() {
  NumpyCase c = Noise("f32_source_f16_target", DType::kFloat32, Shape::Of({8, 16}), 0.0, 7);
  c.target_dtype = DType::kFloat16;
  c.source[17] = 70000.0;
  c.source[99] = -1e6;
  c.target = c.source;
  return c;
}

NumpyCase BFloat16() {
  NumpyCase c = Noise("bf16_noise", DType::kBFloat16, Shape::Of({64}), 1e-2, 8);
  c.tolerance = Tolerance{1e-3, 1e-2};
  return c;
}

NumpyCase Fixed(std::string name, DType dtype, std::vector<double> source,
                std::vector<double> target) {
  const auto count = static_cast<int64_t>(source.size());
  NumpyCase c = NewCase(std::move(name), dtype, Shape::Of({count}), Tolerance{1e-5, 1e-3});
  c.source = std::move(source);
  c.target = std::move(target);
  return c;
}

// Several blocks and a ragged tail (300009 is no multiple of any vector width or chunk), 0.3% of
// elements well outside tolerance: the threaded, vectorized path end to end.
NumpyCase LargeNoise() {
  NumpyCase c = Noise("f32_large_blocks", DType::kFloat32, Shape::Of({3, 100003}), 1e-4, 11);
  Rng rng(12);
  for (int repeat = 0; repeat < 900; ++repeat) c.target[rng.Next() % c.target.size()] += 0.01;
  return c;
}

// Errors from denormal to 1e30 with many exact zeros and exact ties: percentiles on the
// histogram's awkward buckets (zero, denormals, equal values spanning ranks).
NumpyCase HugeRange() {
  NumpyCase c = NewCase("f64_huge_range", DType::kFloat64, Shape::Of({4099}), {1e-5, 1e-3});
  Rng rng(13);
  for (int64_t idx = 0; idx < 4099; ++idx) {
    const double s = rng.Uniform(-1.0, 1.0) * std::pow(10.0, rng.Uniform(-300.0, 30.0));
    const double u = rng.Uniform();
    const double error = u < 0.3   ? 0.0
                         : u < 0.4 ? 4.9e-324 * (1 + idx % 3)
                         : u < 0.6 ? 0.125
                                   : s * 1e-3;
    c.source.push_back(s);
    c.target.push_back(s + error);
  }
  return c;
}

NumpyCase WithTolerance(NumpyCase c, Tolerance tolerance) {
  c.tolerance = tolerance;
  return c;
}

}  // namespace

Tensor NumpyCase::MakeSource() const { return MakeTensor(source_dtype, shape, source); }
Tensor NumpyCase::MakeTarget() const { return MakeTensor(target_dtype, shape, target); }

std::vector<NumpyCase> MakeNumpyCases() {
  std::vector<NumpyCase> cases;
  cases.push_back(Noise("f32_noise", DType::kFloat32, Shape::Of({4, 250}), 2e-3, 1));
  cases.push_back(Noise("f64_noise_large", DType::kFloat64, Shape::Of({3, 5000}), 1e-3, 9));
  cases.push_back(Magnitudes());
  cases.push_back(Ties());
  cases.push_back(Half());
  cases.push_back(NonFinite());
  cases.push_back(ZeroTolerance());
  cases.push_back(Fp16Target());
  cases.push_back(BFloat16());
  cases.push_back(Noise("f32_equal", DType::kFloat32, Shape::Of({10, 10}), 0.0, 10));
  cases.push_back(Fixed("f32_single", DType::kFloat32, {0.75}, {0.7}));
  cases.push_back(Fixed("f64_pair", DType::kFloat64, {1.0, -1.0}, {1.25, -1.0}));
  cases.push_back(Fixed("f32_all_nan", DType::kFloat32, {kNaN, kNaN, kNaN}, {kNaN, kNaN, kNaN}));
  cases.push_back(Fixed("f16_inherited_only", DType::kFloat16, {kNaN, 1.0, kInf}, {2.0, 1.0, 4.0}));
  cases.push_back(LargeNoise());
  cases.push_back(HugeRange());
  // Metric edges: both sides zero, one side zero, the other side zero.
  cases.push_back(Fixed("f32_both_zero", DType::kFloat32, {0, 0, 0, 0}, {0, 0, 0, 0}));
  cases.push_back(Fixed("f32_source_zero", DType::kFloat32, {0, 0, 0}, {1, -2, 0.5}));
  cases.push_back(Fixed("f32_target_zero", DType::kFloat32, {1, -2, 0.5}, {0, 0, 0}));
  // Integers compare exactly; with zero tolerances numpy.isclose agrees.
  cases.push_back(WithTolerance(
      Fixed("i32_exact", DType::kInt32, {1, -5, 7, 100000, 3, 3}, {1, -4, 7, 99000, 3, -3}),
      Tolerance{0.0, 0.0}));
  return cases;
}

}  // namespace convgate::compare
