// Cross-checks every statistic of CompareTensors that numpy can compute against numpy itself
// (numpy_stats.py, run with Debian's /usr/bin/python3). Deterministic random tensors, some with
// NaN/Inf, some with heavy ties for the percentiles, are written as raw little-endian files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/numpy_cases.h"
#include "convgate/compare/tensor_compare.h"

namespace convgate::compare {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kPython[] = "/usr/bin/python3";  // Debian's; the pyenv python on PATH has no numpy
constexpr double kRelTolerance = 1e-12;         // summation order differs (numpy sums pairwise)

double ToDouble(const json& value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    return text == "inf" ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
  }
  return value.get<double>();
}

void ExpectAgrees(double ours, const json& theirs_json, const std::string& what) {
  const double theirs = ToDouble(theirs_json);
  if (std::isnan(theirs) || std::isinf(theirs)) {
    EXPECT_TRUE(std::isnan(ours) ? std::isnan(theirs) : ours == theirs)
        << what << ": ours " << ours << ", numpy " << theirs;
    return;
  }
  const double scale = std::max(std::abs(ours), std::abs(theirs));
  EXPECT_LE(std::abs(ours - theirs), kRelTolerance * scale)
      << what << ": ours " << ours << ", numpy " << theirs;
}

void ExpectSummaryAgrees(const ValueSummary& ours, const json& theirs, const std::string& what) {
  ExpectAgrees(ours.min, theirs["min"], what + ".min");
  ExpectAgrees(ours.max, theirs["max"], what + ".max");
  ExpectAgrees(ours.mean, theirs["mean"], what + ".mean");
  EXPECT_EQ(ours.finite, theirs["finite"].get<int64_t>()) << what;
  EXPECT_EQ(ours.nan, theirs["nan"].get<int64_t>()) << what;
  EXPECT_EQ(ours.pos_inf, theirs["pos_inf"].get<int64_t>()) << what;
  EXPECT_EQ(ours.neg_inf, theirs["neg_inf"].get<int64_t>()) << what;
}

void ExpectSplitAgrees(const NonFiniteSplit& ours, const json& theirs) {
  EXPECT_EQ(ours.introduced_nan, theirs["introduced_nan"].get<int64_t>());
  EXPECT_EQ(ours.introduced_inf, theirs["introduced_inf"].get<int64_t>());
  EXPECT_EQ(ours.inherited, theirs["inherited"].get<int64_t>());
  EXPECT_EQ(ours.shared_nan, theirs["shared_nan"].get<int64_t>());
  EXPECT_EQ(ours.shared_inf, theirs["shared_inf"].get<int64_t>());
  EXPECT_EQ(ours.first_introduced, theirs["first_introduced"].get<int64_t>());
  EXPECT_EQ(ours.first_introduced_nan, theirs["first_introduced_nan"].get<int64_t>());
  EXPECT_EQ(ours.first_introduced_inf, theirs["first_introduced_inf"].get<int64_t>());
  EXPECT_EQ(ours.first_inherited, theirs["first_inherited"].get<int64_t>());
}

void ExpectElementAgrees(const ElementReport& ours, const json& theirs, const std::string& what) {
  ASSERT_EQ(ours.flat, theirs["flat"].get<int64_t>()) << what;
  EXPECT_EQ(ours.index, theirs["index"].get<std::vector<int64_t>>()) << what;
  if (ours.flat < 0) return;
  ExpectAgrees(ours.source, theirs["source"], what + ".source");
  ExpectAgrees(ours.target, theirs["target"], what + ".target");
  ExpectAgrees(ours.abs_error, theirs["abs_error"], what + ".abs_error");
  ExpectAgrees(ours.rel_error, theirs["rel_error"], what + ".rel_error");
  ExpectAgrees(ours.allowed, theirs["allowed"], what + ".allowed");
}

void ExpectErrorsAgree(const ErrorStats& ours, const json& theirs) {
  ASSERT_EQ(ours.compared, theirs["compared"].get<int64_t>());
  if (ours.compared == 0) return;
  ExpectAgrees(ours.max_abs_error, theirs["max_abs_error"], "max_abs_error");
  ExpectAgrees(ours.mean_abs_error, theirs["mean_abs_error"], "mean_abs_error");
  ExpectAgrees(ours.max_rel_error, theirs["max_rel_error"], "max_rel_error");
  ExpectAgrees(ours.mean_rel_error, theirs["mean_rel_error"], "mean_rel_error");
  for (size_t idx = 0; idx < std::size(kPercentiles); ++idx) {
    ExpectAgrees(ours.abs_error_percentiles[idx], theirs["percentiles"][idx],
                 "p" + std::to_string(kPercentiles[idx]));
  }
  ExpectElementAgrees(ours.max_abs, theirs["max_abs"], "max_abs");
}

void ExpectMetricsAgree(const Metrics& ours, const json& theirs) {
  ExpectAgrees(ours.rmse, theirs["rmse"], "rmse");
  ExpectAgrees(ours.nmse, theirs["nmse"], "nmse");
  ExpectAgrees(ours.cosine, theirs["cosine"], "cosine");
  ExpectAgrees(ours.snr_db, theirs["snr_db"], "snr_db");
  ExpectAgrees(ours.psnr_db, theirs["psnr_db"], "psnr_db");
  ExpectAgrees(ours.peak, theirs["peak"], "peak");
}

void ExpectComparisonAgrees(const TensorComparison& ours, const json& theirs) {
  EXPECT_EQ(ours.num_elements, theirs["num_elements"].get<int64_t>());
  ExpectSummaryAgrees(ours.source_values, theirs["source_values"], "source_values");
  ExpectSummaryAgrees(ours.target_values, theirs["target_values"], "target_values");
  ExpectSplitAgrees(ours.non_finite, theirs["non_finite"]);
  ExpectErrorsAgree(ours.errors, theirs["errors"]);
  ExpectMetricsAgree(ours.metrics, theirs["metrics"]);
  EXPECT_EQ(ours.mismatches, theirs["mismatches"].get<int64_t>());
  ExpectAgrees(ours.mismatch_fraction, theirs["mismatch_fraction"], "mismatch_fraction");
  ExpectElementAgrees(ours.worst, theirs["worst"], "worst");
  EXPECT_EQ(ours.passed, theirs["passed"].get<bool>());
}

class NumpyCrossCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convgate_compare_numpy_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteBytes(const std::string& file, const Tensor& tensor) {
    std::ofstream out(dir_ / file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(tensor.bytes().data()),
              static_cast<std::streamsize>(tensor.byte_size()));
  }

  json WriteCase(const NumpyCase& c, const Tensor& source, const Tensor& target) {
    WriteBytes(c.name + ".source.bin", source);
    WriteBytes(c.name + ".target.bin", target);
    return json{{"name", c.name},
                {"source_dtype", DTypeName(source.dtype())},
                {"target_dtype", DTypeName(target.dtype())},
                {"shape", source.shape().dims()},
                {"atol", c.tolerance.atol},
                {"rtol", c.tolerance.rtol},
                {"source", c.name + ".source.bin"},
                {"target", c.name + ".target.bin"}};
  }

  // Runs numpy_stats.py on the cases file and returns its stdout.
  std::string RunNumpy(const fs::path& cases_file) {
    const std::string command = std::string(kPython) + " '" + CONVGATE_SOURCE_DIR +
                                "/tests/compare/numpy_stats.py' '" + cases_file.string() + "'";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return "";
    std::string output;
    char buffer[4096];
    size_t read = 0;
    while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, read);
    const int status = ::pclose(pipe);
    EXPECT_EQ(status, 0) << command;
    return output;
  }

  fs::path dir_;
};

TEST_F(NumpyCrossCheck, EveryStatisticAgreesWithNumpy) {
  if (std::endian::native != std::endian::little) GTEST_SKIP() << "files are written natively";
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " not found";
  const std::vector<NumpyCase> cases = MakeNumpyCases();
  json description = {{"cases", json::array()}};
  std::vector<TensorComparison> ours;
  for (const NumpyCase& c : cases) {
    const Tensor source = c.MakeSource();
    const Tensor target = c.MakeTarget();
    description["cases"].push_back(WriteCase(c, source, target));
    ours.push_back(CompareTensors(source, target, c.tolerance));
  }
  const fs::path cases_file = dir_ / "cases.json";
  std::ofstream(cases_file) << description.dump(1);
  const std::string output = RunNumpy(cases_file);
  const json theirs = json::parse(output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(theirs.is_discarded()) << "numpy_stats.py printed: " << output;
  for (size_t case_idx = 0; case_idx < cases.size(); ++case_idx) {
    SCOPED_TRACE(cases[case_idx].name);
    ASSERT_TRUE(theirs.contains(cases[case_idx].name));
    ExpectComparisonAgrees(ours[case_idx], theirs[cases[case_idx].name]);
  }
}

}  // namespace
}  // namespace convgate::compare
