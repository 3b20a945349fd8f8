// The YAML policy file: the documented schema, and every error path naming file, line, key and
// value.
#include "convgate/compare/policy_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace convgate::compare {
namespace {

// docs/policy.md's example, verbatim.
constexpr char kReadmeExample[] = R"(atol: 1e-5
rtol: 1e-3
check_error_stat: elementwise   # or max | mean | median | p99 | p99.5 ...
mismatch_ppm: 0
min_cosine: 0.999
min_snr_db: 40
dtype_defaults: {float16: {atol: 1e-3, rtol: 1e-2}}
outputs:
  logits: {atol: 1e-4, check_error_stat: p99}
)";

TEST(PolicyFile, ReadsTheDocumentedSchema) {
  Result<Policy> policy = ParsePolicyYaml(kReadmeExample, "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ(policy->global.atol, 1e-5);
  EXPECT_EQ(policy->global.rtol, 1e-3);
  EXPECT_EQ(policy->global.check_error_stat->kind, ErrorStatKind::kElementwise);
  EXPECT_EQ(policy->global.mismatch_ppm, 0.0);
  EXPECT_EQ(policy->global.min_cosine, 0.999);
  EXPECT_EQ(policy->global.min_snr_db, 40.0);
  EXPECT_EQ(policy->dtype_defaults.at(DType::kFloat16).atol, 1e-3);
  EXPECT_EQ(policy->dtype_defaults.at(DType::kFloat16).rtol, 1e-2);
  const OutputPolicy logits = policy->For("logits");
  EXPECT_EQ(logits.atol, 1e-4);
  EXPECT_EQ(logits.rtol, 1e-3);
  EXPECT_EQ(ErrorStatName(logits.check_error_stat), "p99");
}

TEST(PolicyFile, EmptyFileIsAnEmptyPolicy) {
  for (const char* text : {"", "# only a comment\n", "---\n"}) {
    Result<Policy> policy = ParsePolicyYaml(text, "p.yaml");
    ASSERT_TRUE(policy.ok()) << text << ": " << policy.status().message();
    EXPECT_TRUE(policy->global.empty());
    EXPECT_TRUE(policy->per_output.empty());
  }
}

struct BadFile {
  const char* text;
  const char* message;
};

TEST(PolicyFile, EveryErrorNamesFileLineKeyAndValue) {
  const BadFile cases[] = {
      {"atol: [1, 2", "p.yaml: line 1: not valid YAML: "},
      {"- atol\n", "p.yaml: line 1: expected a mapping, got a sequence"},
      {"atoll: 1\n",
       "p.yaml: line 1: unknown key 'atoll' (known: atol, rtol, check_error_stat, "
       "mismatch_ppm, min_cosine, min_snr_db, dtype_defaults, outputs)"},
      {"atol: abc\n", "p.yaml: line 1: atol: 'abc' is not a number"},
      {"rtol: [1]\n", "p.yaml: line 1: rtol: expected a number, got a sequence"},
      {"atol:\n", "p.yaml: line 1: atol: no value given"},
      {"atol: -1\n", "p.yaml: line 1: atol: tolerances must be finite and >= 0, got -1"},
      {"rtol: 1\nmismatch_ppm: 2e6\n",
       "p.yaml: line 2: mismatch_ppm: mismatch ppm must be in [0, 1000000], got 2e6"},
      {"min_cosine: 2\n",
       "p.yaml: line 1: min_cosine: a cosine similarity must be in [-1, 1], got 2"},
      {"min_snr_db: .inf\n", "p.yaml: line 1: min_snr_db: '.inf' is not a number"},
      {"check_error_stat: p101\n",
       "p.yaml: line 1: check_error_stat: 'p101' is not an error statistic: use elementwise, max, "
       "mean, median or pNN with 0 <= NN <= 100 (p99, p99.5)"},
      {"check_error_stat: {a: 1}\n",
       "p.yaml: line 1: check_error_stat: expected a statistic, got a mapping"},
      {"outputs: [logits]\n", "p.yaml: line 1: outputs: expected a mapping, got a sequence"},
      {"outputs: {'': {atol: 1}}\n", "p.yaml: line 1: outputs: an output name is empty"},
      {"outputs:\n  logits: 3\n", "p.yaml: line 2: outputs.logits: expected a mapping, got '3'"},
      {"outputs:\n  logits: {atol: x}\n",
       "p.yaml: line 2: outputs.logits.atol: 'x' is not a number"},
      {"outputs:\n  logits:\n    dtype_defaults: {}\n",
       "p.yaml: line 3: outputs.logits: unknown key 'dtype_defaults' (an output takes atol, rtol, "
       "check_error_stat, mismatch_ppm, min_cosine, min_snr_db)"},
      {"dtype_defaults: {float8: {atol: 1}}\n",
       "p.yaml: line 1: dtype_defaults.float8: unknown dtype 'float8' (float16, bfloat16, float32 "
       "or float64)"},
      {"dtype_defaults: {int32: {atol: 1}}\n",
       "p.yaml: line 1: dtype_defaults.int32: integer, bool and string outputs compare exactly: no "
       "tolerance to set"},
      {"dtype_defaults:\n  float16: {check_error_stat: max}\n",
       "p.yaml: line 2: dtype_defaults.float16: unknown key 'check_error_stat' (a dtype default "
       "takes atol and rtol)"},
      {"dtype_defaults:\n  float16: {rtol: -0.5}\n",
       "p.yaml: line 2: dtype_defaults.float16.rtol: tolerances must be finite and >= 0, got -0.5"},
      {"dtype_defaults: 1\n", "p.yaml: line 1: dtype_defaults: expected a mapping, got '1'"},
      {"outputs:\n  \xff\xfe: {atol: 1}\n",
       "p.yaml: line 2: not valid YAML: byte 0xff at offset 11 is not UTF-8"},
  };
  for (const BadFile& bad : cases) {
    Result<Policy> policy = ParsePolicyYaml(bad.text, "p.yaml");
    ASSERT_FALSE(policy.ok()) << bad.text;
    EXPECT_EQ(policy.status().code(), StatusCode::kInvalidArgument) << bad.text;
    // YAML syntax errors carry yaml-cpp's own wording after the prefix.
    EXPECT_EQ(policy.status().message().rfind(bad.message, 0), 0u)
        << bad.text << "\n  got: " << policy.status().message();
  }
}

TEST(PolicyFile, ReadsFromDiskAndNamesAMissingFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("convgate_policy_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / "policy.yaml";
  std::ofstream(path) << "rtol: 0.01\noutputs: {probs: {min_snr_db: 30}}\n";
  Result<Policy> policy = ReadPolicyFile(path);
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ(policy->global.rtol, 0.01);
  EXPECT_EQ(policy->For("probs").min_snr_db, 30.0);
  for (const std::filesystem::path& bad : {dir / "missing.yaml", dir}) {
    Result<Policy> missing = ReadPolicyFile(bad);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(missing.status().message().find(bad.string()), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace convgate::compare
