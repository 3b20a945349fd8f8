// The conversion driver end to end in-process: built-in conversions, an external converter that
// fails in every way tests/fixtures/fake_converter.py knows, retries, and the cache.
#include "convgate/convert/convert.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "convert/convert_test_util.h"
#include "convert/retry.h"
#include "convgate/convert/cache.h"
#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"

namespace convgate::convert {
namespace {

namespace fs = std::filesystem;

const fs::path kTinyCnn = fs::path(CONVGATE_BINARY_DIR) / "examples" / "tinycnn.onnx";
const fs::path kFakeConverter =
    fs::path(CONVGATE_SOURCE_DIR) / "tests" / "fixtures" / "fake_converter.py";
constexpr char kPython[] = "/usr/bin/python3";

std::string Join(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes) text += note + "\n";
  return text;
}

class ConvertTest : public ::testing::Test {
 protected:
  ConversionRequest Request(const std::string& kind) {
    ConversionRequest request;
    request.source = kTinyCnn;
    request.kind = kind;
    request.output = dir_.path() / "out" / "model.onnx";
    request.cache_dir = dir_.path() / "cache";
    request.backoff_seconds = 0.01;
    return request;
  }

  ConversionRequest Fake(const std::string& mode, std::vector<std::string> extra = {}) {
    ConversionRequest request = Request("external");
    request.converter_argv = {kPython, kFakeConverter.string(), mode, "{src}", "{out}"};
    request.converter_argv.insert(request.converter_argv.end(), extra.begin(), extra.end());
    return request;
  }

  // Fails the test unless the cache holds exactly `entries` entries and no work directories.
  void ExpectCacheHolds(size_t entries) {
    ConversionCache cache(dir_.path() / "cache");
    Result<std::vector<CacheEntry>> listed = cache.List();
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->size(), entries);
    for (const CacheEntry& entry : *listed) {
      EXPECT_EQ(cache.Lookup(entry.record.key)->state, LookupState::kHit);
    }
    const fs::path work = cache.EntriesDir() / ".tmp";
    EXPECT_TRUE(!fs::exists(work) || fs::is_empty(work)) << "work directories left behind";
  }

  // Converts expecting failure; returns the record.
  ConversionRecord ExpectFailure(const ConversionRequest& request, ConversionError error) {
    ConversionRecord record;
    Result<ConversionRecord> converted = Convert(request, &record);
    EXPECT_FALSE(converted.ok());
    EXPECT_EQ(record.error, error)
        << ConversionErrorName(record.error) << ": " << converted.status().message();
    EXPECT_EQ(record.error_message, converted.status().message());
    return record;
  }

  testing::ScopedTempDir dir_;
};

TEST_F(ConvertTest, OpsetUpgradeRunsInOnnxRuntimeWithTheSameOutputs) {
  Result<ConversionRecord> record = Convert(Request("opset:17"), nullptr);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->tool, "onnx version converter");
  EXPECT_EQ(record->tool_version, "1.12.0");
  EXPECT_EQ(record->attempts, 1);
  EXPECT_FALSE(record->cache_hit);
  EXPECT_NE(Join(record->notes).find("opset 13 -> 17"), std::string::npos);
  EXPECT_EQ(*Sha256File(record->output_path), record->output_sha256);
#if CONVGATE_WITH_ONNXRUNTIME
  Result<TensorMap> expected = testing::RunInOrt(kTinyCnn);
  Result<TensorMap> actual = testing::RunInOrt(record->output_path);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  EXPECT_LT(testing::MaxAbsDiff((*expected)[0].tensor, (*actual)[0].tensor), 1e-6);
#endif
  ExpectCacheHolds(1);
}

TEST_F(ConvertTest, AnOpsetBeyondTheConverterIsABadRequest) {
  ConversionRecord record = ExpectFailure(Request("opset:18"), ConversionError::kBadRequest);
  EXPECT_NE(record.error_message.find("reaches opsets 1 to 17"), std::string::npos)
      << record.error_message;
  EXPECT_NE(record.error_message.find("tinycnn.onnx"), std::string::npos);
  EXPECT_EQ(ExitCodeFor(record.error), ExitCode::kUsage);
  ExpectFailure(Request("opset:x"), ConversionError::kBadRequest);
  ExpectFailure(Request("fp32"), ConversionError::kBadRequest);
  ConversionRequest unknown = Request("fp16");
  unknown.params["colour"] = "blue";
  ExpectFailure(unknown, ConversionError::kBadRequest);
}

TEST_F(ConvertTest, AMissingSourceIsNamed) {
  ConversionRequest request = Request("fp16");
  request.source = dir_.path() / "nope.onnx";
  ConversionRecord record = ExpectFailure(request, ConversionError::kSourceNotFound);
  EXPECT_NE(record.error_message.find("nope.onnx"), std::string::npos);
  EXPECT_NE(record.error_message.find("does not exist"), std::string::npos);
  EXPECT_EQ(ExitCodeFor(record.error), ExitCode::kCannotRun);
}

TEST_F(ConvertTest, ASourceThatIsNotAModelFailsInTheConverter) {
  ConversionRequest request = Request("opset:17");
  request.source = dir_.path() / "junk.onnx";
  ASSERT_TRUE(WriteFileAtomic(request.source, "not a model").ok());
  ConversionRecord record = ExpectFailure(request, ConversionError::kFailed);
  EXPECT_NE(record.error_message.find("junk.onnx"), std::string::npos) << record.error_message;
  ExpectCacheHolds(0);
}

TEST_F(ConvertTest, Fp16AndOrtOptimizedConversionsProduceRunnableModels) {
  for (const std::string kind : {"fp16", "ort-optimized:basic", "ort-optimized:all"}) {
    ConversionRequest request = Request(kind);
    request.output = dir_.path() / (kind.substr(0, 4) + kind.substr(kind.size() - 3) + ".onnx");
    Result<ConversionRecord> record = Convert(request, nullptr);
    ASSERT_TRUE(record.ok()) << kind << ": " << record.status().ToString();
#if CONVGATE_WITH_ONNXRUNTIME
    Result<TensorMap> expected = testing::RunInOrt(kTinyCnn);
    Result<TensorMap> actual = testing::RunInOrt(record->output_path);
    ASSERT_TRUE(actual.ok()) << kind << ": " << actual.status().ToString();
    EXPECT_LT(testing::MaxAbsDiff((*expected)[0].tensor, (*actual)[0].tensor), 1e-2) << kind;
#endif
  }
  ExpectCacheHolds(3);
}

TEST_F(ConvertTest, TheSecondIdenticalConversionIsACacheHit) {
  Result<ConversionRecord> first = Convert(Fake("copy"), nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_EQ(first->attempts, 1);
  EXPECT_EQ(first->tool, "python3 fake_converter.py");
  EXPECT_EQ(first->tool_version.rfind("sha256:", 0), 0u);
  fs::remove(first->output_path);
  Result<ConversionRecord> second = Convert(Fake("copy"), nullptr);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->attempts, 0);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_EQ(second->output_sha256, *Sha256File(kTinyCnn));
  EXPECT_EQ(*Sha256File(second->output_path), second->output_sha256);
  EXPECT_LT(second->seconds, first->seconds);
  ExpectCacheHolds(1);
}

TEST_F(ConvertTest, TheKeyChangesWithTheParametersAndTheConverter) {
  ConversionRequest v1 = Fake("copy");
  v1.params["version"] = "1";
  ConversionRequest v2 = Fake("copy");
  v2.params["version"] = "2";
  Result<ConversionRecord> one = Convert(v1, nullptr);
  Result<ConversionRecord> two = Convert(v2, nullptr);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_NE(one->cache_key, two->cache_key);
  EXPECT_EQ(two->tool_version, "2");
  // The same command line, but the script behind it changed: a different converter.
  const fs::path script = dir_.path() / "fake_converter.py";
  fs::copy_file(kFakeConverter, script);
  ConversionRequest copied = Fake("copy");
  copied.converter_argv[1] = script.string();
  Result<ConversionRecord> before = Convert(copied, nullptr);
  { std::ofstream(script, std::ios::app) << "# a new version\n"; }
  Result<ConversionRecord> after = Convert(copied, nullptr);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_NE(before->cache_key, after->cache_key);
  EXPECT_NE(before->tool_version, after->tool_version);
  EXPECT_FALSE(after->cache_hit);
  ExpectCacheHolds(4);
}

TEST_F(ConvertTest, AFailingConverterIsReportedWithItsOutputAndCachesNothing) {
  ConversionRecord record = ExpectFailure(Fake("fail"), ConversionError::kFailed);
  EXPECT_EQ(record.attempts, 1);  // a plain failure is not retried
  EXPECT_NE(record.error_message.find("external converter"), std::string::npos);
  EXPECT_NE(record.error_message.find("tinycnn.onnx"), std::string::npos);
  EXPECT_NE(record.error_message.find("exited with code 1"), std::string::npos);
  EXPECT_NE(record.error_message.find("unsupported operator FancyOp"), std::string::npos)
      << record.error_message;
  EXPECT_NE(record.log_tail.find("FancyOp"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.path() / "out" / "model.onnx"));
  ExpectCacheHolds(0);
}

TEST_F(ConvertTest, AHangingConverterTimesOutAndIsRetried) {
  ConversionRequest request = Fake("sleep");
  request.timeout_seconds = 0.3;
  request.max_attempts = 2;
  ConversionRecord record = ExpectFailure(request, ConversionError::kTimedOut);
  EXPECT_EQ(record.attempts, 2);
  EXPECT_NE(record.error_message.find("timed out after"), std::string::npos);
  EXPECT_NE(Join(record.notes).find("attempt 1 of 2 failed (timed out"), std::string::npos)
      << Join(record.notes);
  EXPECT_LT(record.seconds, 10.0);
  ExpectCacheHolds(0);
}

// Injected hang: the fake converter sleeps (no CPU, as a converter stuck in a futex wait) on its
// first run. With a stall time of 0.5 s ($CONVGATE_CONVERTER_STALL_SECONDS) it is found hung long
// before the 60 s timeout, said so, and retried; the second run converts.
TEST_F(ConvertTest, AConverterWithoutCpuProgressIsHungAndRetried) {
  ::setenv(kStallSecondsEnv, "0.5", 1);
  const std::string counter = (dir_.path() / "runs").string();
  ConversionRequest request = Fake("stall", {"--counter", counter, "--failures", "1"});
  request.timeout_seconds = 60.0;
  request.max_attempts = 3;
  Result<ConversionRecord> record = Convert(request, nullptr);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->attempts, 2);
  EXPECT_NE(Join(record->notes)
                .find("attempt 1 of 3 failed (hung: no CPU progress for 0.5 s); retried after"),
            std::string::npos)
      << Join(record->notes);
  EXPECT_LT(record->seconds, 20.0);
  // A converter that hangs every time fails as hung, not as timed out (nor out of memory).
  ConversionRequest always = Fake("stall", {"--counter", counter, "--failures", "100"});
  always.timeout_seconds = 60.0;
  always.max_attempts = 2;
  always.output = dir_.path() / "out" / "always.onnx";
  ConversionRecord failed = ExpectFailure(always, ConversionError::kFailed);
  ::unsetenv(kStallSecondsEnv);
  EXPECT_EQ(failed.attempts, 2);
  EXPECT_NE(failed.error_message.find("hung: no CPU progress for 0.5 s"), std::string::npos)
      << failed.error_message;
  EXPECT_LT(failed.seconds, 20.0);
}

TEST_F(ConvertTest, TransientFailuresAreRetriedWithBackoffUntilTheyPass) {
  const std::string counter = (dir_.path() / "runs").string();
  ConversionRequest request = Fake("transient", {"--counter", counter, "--failures", "2"});
  request.max_attempts = 3;
  Result<ConversionRecord> record = Convert(request, nullptr);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_EQ(record->attempts, 3);
  EXPECT_EQ(*ReadFile(counter), "3");
  const std::string notes = Join(record->notes);
  EXPECT_NE(notes.find("attempt 1 of 3 failed (exited with code 75); retried after 0.01 s"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("attempt 2 of 3 failed (exited with code 75); retried after 0.02 s"),
            std::string::npos)
      << notes;
  ExpectCacheHolds(1);
}

TEST_F(ConvertTest, TransientFailuresStopAfterTheLastAttempt) {
  ConversionRequest request =
      Fake("transient", {"--counter", (dir_.path() / "runs").string(), "--failures", "5"});
  request.max_attempts = 2;
  ConversionRecord record = ExpectFailure(request, ConversionError::kFailed);
  EXPECT_EQ(record.attempts, 2);
  EXPECT_NE(record.error_message.find("temporarily unavailable"), std::string::npos);
  ExpectCacheHolds(0);
}

TEST_F(ConvertTest, AConverterThatWritesNothingOrGarbageIsCaught) {
  ConversionRecord nothing = ExpectFailure(Fake("nothing"), ConversionError::kNoOutput);
  EXPECT_NE(nothing.error_message.find("reported success but wrote nothing"), std::string::npos);
  ConversionRecord garbage = ExpectFailure(Fake("garbage"), ConversionError::kInvalidOutput);
  EXPECT_NE(garbage.error_message.find("not a valid ONNX model"), std::string::npos)
      << garbage.error_message;
  EXPECT_EQ(garbage.attempts, 1);
  ExpectFailure(Fake("partial"), ConversionError::kFailed);
  EXPECT_FALSE(fs::exists(dir_.path() / "out" / "model.onnx"));
  ExpectCacheHolds(0);
}

TEST_F(ConvertTest, AFailedConversionLeavesAnExistingOutputAlone) {
  ConversionRequest request = Fake("partial");
  fs::create_directories(request.output.parent_path());
  ASSERT_TRUE(WriteFileAtomic(request.output, "the previous result").ok());
  ExpectFailure(request, ConversionError::kFailed);
  EXPECT_EQ(*ReadFile(request.output), "the previous result");
}

TEST_F(ConvertTest, ACorruptCacheEntryIsDetectedAndRebuilt) {
  Result<ConversionRecord> first = Convert(Fake("copy"), nullptr);
  ASSERT_TRUE(first.ok());
  { std::ofstream(first->cache_path, std::ios::binary | std::ios::trunc) << "bit rot"; }
  Result<ConversionRecord> second = Convert(Fake("copy"), nullptr);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(second->cache_hit);
  EXPECT_EQ(second->attempts, 1);
  EXPECT_NE(Join(second->notes).find("failed verification"), std::string::npos)
      << Join(second->notes);
  EXPECT_EQ(*Sha256File(second->output_path), *Sha256File(kTinyCnn));
  ExpectCacheHolds(1);
  Result<ConversionRecord> third = Convert(Fake("copy"), nullptr);
  EXPECT_TRUE(third->cache_hit);
}

TEST_F(ConvertTest, WithoutTheCacheNothingIsStored) {
  ConversionRequest request = Fake("copy");
  request.use_cache = false;
  Result<ConversionRecord> record = Convert(request, nullptr);
  ASSERT_TRUE(record.ok()) << record.status().ToString();
  EXPECT_TRUE(record->cache_path.empty());
  EXPECT_EQ(*Sha256File(request.output), *Sha256File(kTinyCnn));
  EXPECT_FALSE(fs::exists(dir_.path() / "cache"));
  // Without an output either (verify --no-cache): made in a temporary folder that lives as long
  // as the record's hold, and nothing is stored.
  request.output.clear();
  fs::path made;
  {
    Result<ConversionRecord> held = Convert(request, nullptr);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    made = held->output_path;
    EXPECT_TRUE(held->cache_path.empty());
    EXPECT_EQ(*Sha256File(made), *Sha256File(kTinyCnn));
  }
  EXPECT_FALSE(fs::exists(made)) << made << " outlived its record";
  EXPECT_FALSE(fs::exists(dir_.path() / "cache"));
}

TEST_F(ConvertTest, ConverterCommandsAreChecked) {
  ConversionRequest no_out = Request("external");
  no_out.converter_argv = {kPython, kFakeConverter.string(), "copy", "{src}"};
  ExpectFailure(no_out, ConversionError::kBadRequest);
  ConversionRequest missing = Request("external");
  missing.converter_argv = {"convgate-no-such-converter", "{src}", "{out}"};
  ConversionRecord record = ExpectFailure(missing, ConversionError::kConverterMissing);
  EXPECT_NE(record.error_message.find("convgate-no-such-converter"), std::string::npos);
  ConversionRequest both = Request("fp16");
  both.converter_argv = {kPython, "{src}", "{out}"};
  ExpectFailure(both, ConversionError::kBadRequest);
}

}  // namespace
}  // namespace convgate::convert
