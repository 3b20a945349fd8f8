// Golden files: the exact bytes of report.json, verify_result.json, junit.xml and the console text
// for fixed compare, verify and reduce results (tests/report/golden/). A change to any of them is a
// change users and their scripts see, so it must show up in review as a diff of these files.
//
// To accept an intended change, regenerate them and review the diff:
//   CONVGATE_UPDATE_GOLDEN=1 build/tests/report/report_test --gtest_filter='Golden*'
//   git diff tests/report/golden/
// What varies by machine or build (the host, convgate's version and commit) is replaced by
// placeholders before comparing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "convgate/compare/tensor_compare.h"
#include "convgate/gate/reduce.h"
#include "convgate/gate/verify.h"
#include "convgate/report/json_text.h"
#include "convgate/report/render.h"
#include "convgate/report/report.h"
#include "sample_reports.h"

namespace convgate::report {
namespace {

using nlohmann::json;

const std::filesystem::path kGoldenDir =
    std::filesystem::path(CONVGATE_SOURCE_DIR) / "tests" / "report" / "golden";

using sample_reports::Comparison;
using sample_reports::Reduction;
using sample_reports::Verification;

const Invocation kInvocation = {"compare",
                                {"convgate", "compare", "model.onnx", "model_fp16.onnx"},
                                "2026-01-01T00:00:00Z",
                                1.5};

// Placeholders for what differs between machines and builds, wherever it is nested (verify's
// report.json holds the comparison's and the end-to-end run's reports).
json Normalized(json document) {
  if (!document.is_object()) return document;
  for (auto& [key, value] : document.items()) {
    if (key == "host") {
      value = "<host>";
    } else if (key == "tool" && value.is_object() && value.contains("commit")) {
      value["version"] = "<version>";
      value["commit"] = "<commit>";
    } else {
      value = Normalized(value);
    }
  }
  return document;
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares `actual` with the golden file, or rewrites it under CONVGATE_UPDATE_GOLDEN=1.
void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = kGoldenDir / name;
  const char* update = std::getenv("CONVGATE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(kGoldenDir);
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; create it with CONVGATE_UPDATE_GOLDEN=1 (see golden_test.cc)";
  EXPECT_EQ(ReadText(path), actual)
      << name << " differs from " << path
      << "; if the change is intended, regenerate with CONVGATE_UPDATE_GOLDEN=1 and review "
         "`git diff tests/report/golden/`";
}

// The files of one workflow's rendering, as the CLI writes them.
void ExpectGoldenFiles(const std::string& workflow, const Rendering& rendering) {
  ExpectGolden(workflow + "_report.json", DumpJson(Normalized(rendering.report), 2) + "\n");
  ExpectGolden(workflow + "_verify_result.json",
               DumpJson(rendering.verify_result, 2, false) + "\n");
  ExpectGolden(workflow + "_junit.xml", rendering.junit);
  ExpectGolden(workflow + "_console.txt", rendering.console);
}

TEST(Golden, CompareResultFiles) {
  ExpectGoldenFiles("compare", Render(Comparison(), kInvocation, /*color=*/false));
}

TEST(Golden, VerifyResultFiles) {
  Invocation invocation = kInvocation;
  invocation.command = "verify";
  ExpectGoldenFiles("verify", Render(Verification(), invocation, /*color=*/false));
}

TEST(Golden, ReduceResultFiles) {
  Invocation invocation = kInvocation;
  invocation.command = "reduce";
  ExpectGoldenFiles("reduce", Render(Reduction(), invocation, /*color=*/false));
}

}  // namespace
}  // namespace convgate::report
