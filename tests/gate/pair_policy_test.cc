// gate/pair_policy.h: which conversion defaults a pair gets, from the conversion's request and
// record alone (no model is read for convgate's own conversions).
#include "convgate/gate/pair_policy.h"

#include <gtest/gtest.h>

#include <string>

namespace convgate::gate {
namespace {

convert::ConversionRequest Request(const std::string& kind, const std::string& weight_format) {
  convert::ConversionRequest request;
  request.kind = kind;
  if (!weight_format.empty()) request.params["weight_format"] = weight_format;
  return request;
}

// optimum-openvino at its default (fp16 weights) keeps the float16 network profile.
TEST(PairPolicy, Fp16WeightsGetTheFloat16NetworkProfile) {
  const convert::ConversionRequest request = Request("optimum-openvino", "");
  const auto defaults = DecidePairPolicy(PairFacts{.conversion = &request});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_NE(defaults->origin.find("network-level float16"), std::string::npos) << defaults->origin;
  EXPECT_TRUE(defaults->per_output.empty());
  EXPECT_EQ(CompressedWeightFormat(PairFacts{.conversion = &request}), "");
}

// int8 weights: cosine and SNR gate the floating outputs, elementwise differences do not; half
// the generated tokens must agree and the text is reported, as for int4.
TEST(PairPolicy, Int8WeightsGetTheWeightCompressionProfile) {
  const convert::ConversionRequest request = Request("optimum-openvino", "int8");
  const auto defaults = DecidePairPolicy(PairFacts{.conversion = &request});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_NE(defaults->origin.find("weight-compression profile of --to optimum-openvino (int8"),
            std::string::npos)
      << defaults->origin;
  EXPECT_NE(defaults->origin.find("cosine >= 0.999 and SNR >= 25 dB"), std::string::npos)
      << defaults->origin;
  EXPECT_EQ(defaults->settings.mismatch_ppm, 1e6);
  EXPECT_EQ(defaults->settings.min_cosine, 0.999);
  EXPECT_EQ(defaults->settings.min_snr_db, 25.0);
  ASSERT_TRUE(defaults->per_output.contains("token_ids"));
  EXPECT_EQ(defaults->per_output.at("token_ids").mismatch_ppm, 5e5);
  EXPECT_EQ(CompressedWeightFormat(PairFacts{.conversion = &request}), "int8");
}

// int4 weights, asked for or taken as the fallback: lower floors, half the tokens must agree.
TEST(PairPolicy, Int4WeightsAndTheInt4FallbackGetTheLooserProfile) {
  const convert::ConversionRequest asked = Request("optimum-openvino", "int4");
  const auto defaults = DecidePairPolicy(PairFacts{.conversion = &asked});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_NE(defaults->origin.find("cosine >= 0.98 and SNR >= 15 dB"), std::string::npos)
      << defaults->origin;
  EXPECT_EQ(defaults->settings.min_cosine, 0.98);
  EXPECT_EQ(defaults->settings.min_snr_db, 15.0);
  EXPECT_EQ(defaults->per_output.at("token_ids").mismatch_ppm, 5e5);
  EXPECT_EQ(defaults->per_output.at("text").mismatch_ppm, 1e6);

  const convert::ConversionRequest fp16 = Request("optimum-openvino", "");
  convert::ConversionRecord record;
  record.notes.push_back(std::string(convert::kFallbackNotePrefix) +
                         "weight_format int4, because the fp16 export ran out of memory");
  const PairFacts fell_back{.conversion = &fp16, .record = &record};
  const auto fallback = DecidePairPolicy(fell_back);
  ASSERT_TRUE(fallback.has_value());
  EXPECT_NE(fallback->origin.find("(int4 weights, the fallback)"), std::string::npos)
      << fallback->origin;
  EXPECT_EQ(CompressedWeightFormat(fell_back), "int4");
}

// Conversions that do not compress weights get no profile of it.
TEST(PairPolicy, OtherConversionsAreNotCompressed) {
  const convert::ConversionRequest onnx = Request("openvino", "");
  EXPECT_EQ(CompressedWeightFormat(PairFacts{.conversion = &onnx}), "");
  EXPECT_FALSE(DecidePairPolicy(PairFacts{.conversion = &onnx}).has_value());
  EXPECT_EQ(CompressedWeightFormat(PairFacts{}), "");
}

}  // namespace
}  // namespace convgate::gate
