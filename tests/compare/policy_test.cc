// The policy's knobs, their command-line spellings, per-dtype defaults and resolution order.
#include "convgate/compare/policy.h"

#include <gtest/gtest.h>

#include <string>

namespace convgate::compare {
namespace {

TEST(ErrorStat, ParsesEverySpelling) {
  struct Case {
    const char* text;
    ErrorStatKind kind;
    double quantile;
    const char* name;
  };
  const Case cases[] = {
      {"elementwise", ErrorStatKind::kElementwise, -1.0, "elementwise"},
      {"elemwise", ErrorStatKind::kElementwise, -1.0, "elementwise"},  // Polygraphy's spelling
      {"max", ErrorStatKind::kMax, 100.0, "max"},
      {"mean", ErrorStatKind::kMean, -1.0, "mean"},
      {"median", ErrorStatKind::kMedian, 50.0, "median"},
      {"p99", ErrorStatKind::kPercentile, 99.0, "p99"},
      {"p99.5", ErrorStatKind::kPercentile, 99.5, "p99.5"},
      {"p0", ErrorStatKind::kPercentile, 0.0, "p0"},
      {"p100", ErrorStatKind::kPercentile, 100.0, "p100"},
  };
  for (const Case& c : cases) {
    Result<ErrorStat> stat = ParseErrorStat(c.text);
    ASSERT_TRUE(stat.ok()) << c.text << ": " << stat.status().message();
    EXPECT_EQ(stat->kind, c.kind) << c.text;
    EXPECT_EQ(stat->Quantile(), c.quantile) << c.text;
    EXPECT_EQ(ErrorStatName(*stat), c.name) << c.text;
  }
}

TEST(ErrorStat, RejectsAnythingElse) {
  for (const char* text : {"", "p", "p101", "p-1", "pnan", "p99x", "P99", "99", "maximum", "q99"}) {
    Result<ErrorStat> stat = ParseErrorStat(text);
    ASSERT_FALSE(stat.ok()) << text;
    EXPECT_NE(stat.status().message().find("is not an error statistic"), std::string::npos);
  }
}

// Each knob's flag: global and per output, later wins, names split at the last ':'.
TEST(PolicyFlags, EveryKnobGlobalAndPerOutput) {
  Policy policy;
  ASSERT_TRUE(AddCheckErrorStat("p99", policy).ok());
  ASSERT_TRUE(AddCheckErrorStat("logits:0:max", policy).ok());
  ASSERT_TRUE(AddMismatchPpm("100", policy).ok());
  ASSERT_TRUE(AddMismatchPpm("logits:0:0", policy).ok());
  ASSERT_TRUE(AddMinCosine("0.999", policy).ok());
  ASSERT_TRUE(AddMinSnrDb("probs:-3", policy).ok());
  const OutputPolicy other = policy.For("other");
  EXPECT_EQ(ErrorStatName(other.check_error_stat), "p99");
  EXPECT_EQ(other.mismatch_ppm, 100.0);
  EXPECT_EQ(other.min_cosine, 0.999);
  EXPECT_FALSE(other.min_snr_db.has_value());
  const OutputPolicy logits = policy.For("logits:0");
  EXPECT_EQ(ErrorStatName(logits.check_error_stat), "max");
  EXPECT_EQ(logits.mismatch_ppm, 0.0);
  EXPECT_EQ(logits.min_cosine, 0.999);  // the global floor still applies
  EXPECT_EQ(policy.For("probs").min_snr_db, -3.0);
  EXPECT_EQ(policy.NamedOutputs(), (std::vector<std::string>{"logits:0", "probs"}));
}

TEST(PolicyFlags, DefaultsWhenNothingIsSet) {
  const OutputPolicy resolved = Policy().For("x");
  EXPECT_EQ(resolved.check_error_stat.kind, ErrorStatKind::kElementwise);
  EXPECT_EQ(resolved.mismatch_ppm, 0.0);
  EXPECT_FALSE(resolved.min_cosine.has_value());
  EXPECT_FALSE(resolved.min_snr_db.has_value());
}

struct BadFlag {
  Status (*add)(std::string_view, Policy&);
  const char* text;
  const char* message;
};

TEST(PolicyFlags, RejectsBadValuesQuotingTheText) {
  const BadFlag cases[] = {
      {AddMismatchPpm, "-1",
       "invalid mismatch ppm '-1': mismatch ppm must be in [0, 1000000], got -1"},
      {AddMismatchPpm, "x:2e6",
       "invalid mismatch ppm 'x:2e6': mismatch ppm must be in [0, 1000000], got 2e6"},
      {AddMismatchPpm, "nan",
       "invalid mismatch ppm 'nan': mismatch ppm must be in [0, 1000000], got nan"},
      {AddMinCosine, "1.5",
       "invalid min cosine '1.5': a cosine similarity must be in [-1, 1], got 1.5"},
      {AddMinCosine, "a:b", "invalid min cosine 'a:b': 'b' is not a number"},
      {AddMinSnrDb, "inf",
       "invalid min SNR 'inf': an SNR floor must be a finite number of dB, got inf"},
      {AddMinSnrDb, ":40", "invalid min SNR ':40': the output name before ':' is empty"},
      {AddCheckErrorStat, "p101",
       "invalid check-error-stat 'p101': 'p101' is not an error statistic: use elementwise, max, "
       "mean, median or pNN with 0 <= NN <= 100 (p99, p99.5)"},
      {AddCheckErrorStat, ":max",
       "invalid check-error-stat ':max': the output name before ':' is empty"},
  };
  for (const BadFlag& bad : cases) {
    Policy policy;
    const Status status = bad.add(bad.text, policy);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << bad.text;
    EXPECT_EQ(status.message(), bad.message);
    EXPECT_TRUE(policy.per_output.empty()) << bad.text;
    EXPECT_TRUE(policy.global.empty()) << bad.text;
  }
}

// Per-dtype defaults: the lower-precision floating dtype of the two sides decides.
TEST(DTypeDefaults, LowerPrecisionSideDecides) {
  struct Case {
    std::optional<DType> source, target;
    double atol, rtol;
    const char* origin;
  };
  const Case cases[] = {
      {DType::kFloat32, DType::kFloat32, 1e-5, 1e-3, "float32 default: both outputs are float32"},
      {DType::kFloat64, DType::kFloat64, 1e-5, 1e-3, "float64 default: both outputs are float64"},
      {DType::kFloat32, DType::kFloat16, 2.5e-3, 5e-3,
       "float16 default: the target output is float16"},
      {DType::kFloat16, DType::kFloat32, 2.5e-3, 5e-3,
       "float16 default: the source output is float16"},
      {DType::kFloat16, DType::kBFloat16, 2e-2, 4e-2,
       "bfloat16 default: the target output is bfloat16"},
      {DType::kBFloat16, DType::kBFloat16, 2e-2, 4e-2,
       "bfloat16 default: both outputs are bfloat16"},
      {DType::kInt64, DType::kFloat16, 2.5e-3, 5e-3,
       "float16 default: the target output is float16"},
      {DType::kInt32, DType::kInt32, 1e-5, 1e-3, "float32 default"},  // exact: unused
      {std::nullopt, std::nullopt, 1e-5, 1e-3, "float32 default"},
  };
  for (const Case& c : cases) {
    const OutputPolicy resolved = Policy().For("y", c.source, c.target);
    EXPECT_EQ(resolved.atol, c.atol) << c.origin;
    EXPECT_EQ(resolved.rtol, c.rtol) << c.origin;
    EXPECT_EQ(resolved.atol_origin, c.origin);
    EXPECT_EQ(resolved.rtol_origin, c.origin);
  }
}

// An explicit global value beats the dtype default, a per-output one beats both; each knob is
// resolved on its own, so the rtol still comes from the dtype default here.
TEST(DTypeDefaults, ExplicitFlagsBeatThem) {
  Policy policy;
  ASSERT_TRUE(AddAtol("1e-4", policy).ok());
  ASSERT_TRUE(AddAtol("logits:0.5", policy).ok());
  const OutputPolicy probs = policy.For("probs", DType::kFloat32, DType::kFloat16);
  EXPECT_EQ(probs.atol, 1e-4);
  EXPECT_EQ(probs.atol_origin, "global setting");
  EXPECT_EQ(probs.rtol, 5e-3);
  EXPECT_EQ(probs.rtol_origin, "float16 default: the target output is float16");
  const OutputPolicy logits = policy.For("logits", DType::kFloat32, DType::kFloat16);
  EXPECT_EQ(logits.atol, 0.5);
  EXPECT_EQ(logits.atol_origin, "output setting");
}

TEST(DTypeDefaults, PolicyFileOverridesReplaceTheBuiltIns) {
  Policy policy;
  policy.dtype_defaults[DType::kFloat16] = {1e-3, std::nullopt};
  const OutputPolicy resolved = policy.For("y", DType::kFloat16, DType::kFloat16);
  EXPECT_EQ(resolved.atol, 1e-3);
  EXPECT_EQ(resolved.rtol, 5e-3);  // the override left rtol unset
  EXPECT_EQ(resolved.atol_origin, "float16 default (policy file): both outputs are float16");
  EXPECT_EQ(policy.For("y", DType::kFloat32, DType::kFloat32).atol, 1e-5);
}

TEST(Policy, MergeLayersKnobByKnob) {
  Policy base;
  ASSERT_TRUE(AddAtol("1e-4", base).ok());
  ASSERT_TRUE(AddRtol("logits:0.01", base).ok());
  ASSERT_TRUE(AddMinCosine("0.99", base).ok());
  Policy overlay;
  ASSERT_TRUE(AddAtol("logits:0.2", overlay).ok());
  ASSERT_TRUE(AddCheckErrorStat("max", overlay).ok());
  overlay.dtype_defaults[DType::kBFloat16] = {std::nullopt, 0.1};
  base.MergeFrom(overlay);
  const OutputPolicy logits = base.For("logits");
  EXPECT_EQ(logits.atol, 0.2);
  EXPECT_EQ(logits.rtol, 0.01);        // kept from the base
  EXPECT_EQ(logits.min_cosine, 0.99);  // kept from the base
  EXPECT_EQ(logits.check_error_stat.kind, ErrorStatKind::kMax);
  EXPECT_EQ(base.global.atol, 1e-4);
  EXPECT_EQ(base.dtype_defaults[DType::kBFloat16].rtol, 0.1);
}

TEST(DTypeDefaults, BuiltInsSayWhereTheyComeFrom) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    EXPECT_FALSE(BuiltInDTypeDefault(dtype).source.empty()) << DTypeName(dtype);
  }
  EXPECT_NE(BuiltInDTypeDefault(DType::kFloat16).source.find("2^-11"), std::string::npos);
  EXPECT_NE(BuiltInDTypeDefault(DType::kBFloat16).source.find("2^-8"), std::string::npos);
}

// A conversion's defaults replace the dtype defaults and sit below the user's settings.
TEST(ConversionDefaults, BeatDTypeDefaultsAndLoseToTheUser) {
  Policy policy;
  ConversionDefaults defaults;
  defaults.settings.atol = 4e-2;
  defaults.settings.min_cosine = 0.9995;
  defaults.origin = "network-level float16 default of --to openvino:fp16";
  policy.conversion_defaults = defaults;
  OutputPolicy resolved = policy.For("logits", DType::kFloat32, DType::kFloat32);
  EXPECT_EQ(resolved.atol, 4e-2);
  EXPECT_EQ(resolved.atol_origin, defaults.origin);
  EXPECT_EQ(resolved.rtol, 1e-3);  // not set by the conversion: the float32 default
  EXPECT_NE(resolved.rtol_origin.find("float32 default"), std::string::npos)
      << resolved.rtol_origin;
  ASSERT_TRUE(resolved.min_cosine.has_value());
  EXPECT_EQ(*resolved.min_cosine, 0.9995);

  ASSERT_TRUE(AddAtol("1e-4", policy).ok());
  ASSERT_TRUE(AddMinCosine("logits:0.9", policy).ok());
  resolved = policy.For("logits", DType::kFloat32, DType::kFloat32);
  EXPECT_EQ(resolved.atol, 1e-4);
  EXPECT_EQ(resolved.atol_origin, "global setting");
  EXPECT_EQ(*resolved.min_cosine, 0.9);

  Policy overlay;
  overlay.conversion_defaults = ConversionDefaults{.origin = "other"};
  policy.MergeFrom(overlay);
  EXPECT_EQ(policy.conversion_defaults->origin, "other");
}

// A conversion's per-output entry replaces its settings for that output (the weight-compression
// profile's token_ids get no cosine floor), and the user's settings still win over both.
TEST(ConversionDefaults, PerOutputEntriesReplaceTheirSettings) {
  Policy policy;
  ConversionDefaults defaults;
  defaults.settings.mismatch_ppm = 1e6;
  defaults.settings.min_cosine = 0.98;
  defaults.per_output["token_ids"].mismatch_ppm = 5e5;
  defaults.origin = "weight-compression profile";
  policy.conversion_defaults = defaults;
  OutputPolicy logits = policy.For("logits", DType::kFloat32, DType::kFloat32);
  EXPECT_EQ(logits.mismatch_ppm, 1e6);
  ASSERT_TRUE(logits.min_cosine.has_value());
  EXPECT_EQ(*logits.min_cosine, 0.98);
  OutputPolicy tokens = policy.For("token_ids", DType::kInt64, DType::kInt64);
  EXPECT_EQ(tokens.mismatch_ppm, 5e5);
  EXPECT_FALSE(tokens.min_cosine.has_value());
  ASSERT_TRUE(AddMismatchPpm("token_ids:0", policy).ok());
  EXPECT_EQ(policy.For("token_ids", DType::kInt64, DType::kInt64).mismatch_ppm, 0.0);
}

}  // namespace
}  // namespace convgate::compare

namespace convgate::compare {
namespace {

// A measured floor raises a default atol to kNoiseFloorFactor x floor, says so, and never beats
// a setting; an output whose default is already above it keeps the default.
TEST(NoiseFloor, RaisesDefaultsNeverSettings) {
  Policy policy;
  policy.noise_floors["logits"] = NoiseFloor{2.8e-3, 1e-4, 4};
  policy.noise_floors["probs"] = NoiseFloor{1e-9, 1e-7, 4};
  policy.noise_floor_basis = "ONNX Runtime optimization disabled vs extended";
  const OutputPolicy logits = policy.For("logits", DType::kFloat32, DType::kFloat32);
  EXPECT_DOUBLE_EQ(logits.atol, kNoiseFloorFactor * 2.8e-3);
  EXPECT_EQ(logits.atol_origin,
            "8 x the noise floor 0.0028 (ONNX Runtime optimization disabled vs extended)");
  EXPECT_EQ(logits.noise_floor, 2.8e-3);
  EXPECT_DOUBLE_EQ(logits.rtol, 1e-3);  // the floor is absolute: rtol keeps its default
  const OutputPolicy probs = policy.For("probs", DType::kFloat32, DType::kFloat32);
  EXPECT_DOUBLE_EQ(probs.atol, 1e-5);
  EXPECT_EQ(probs.atol_origin.rfind("float32 default", 0), 0u) << probs.atol_origin;
  EXPECT_EQ(policy.For("other").noise_floor, std::nullopt);
  ASSERT_TRUE(AddAtol("1e-4", policy).ok());
  const OutputPolicy set = policy.For("logits", DType::kFloat32, DType::kFloat32);
  EXPECT_DOUBLE_EQ(set.atol, 1e-4);
  EXPECT_EQ(set.atol_origin, "global setting");
}

}  // namespace
}  // namespace convgate::compare
