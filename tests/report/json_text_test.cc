// JSON text that is always valid (json_text.h), read back by RestoreEscapedStrings, and result
// files written each on their own (WriteResultFiles).
#include "convgate/report/json_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/core/utf8.h"
#include "convgate/report/report.h"
#include "report/json/reader.h"

namespace convgate::report {
namespace {

using nlohmann::json;

TEST(DumpJson, ValidUtf8IsWrittenAsNlohmannWritesIt) {
  const json value{{"name", "K\xc3\xb6ln"}, {"path", "C:\\models"}, {"n", 3}};
  EXPECT_EQ(DumpJson(value), value.dump());
  EXPECT_EQ(DumpJson(value, 2), value.dump(2));
}

TEST(DumpJson, BytesThatAreNotUtf8AreEscapedAndListed) {
  json value{{"argv", {"convgate", "--out", "out\xff"}},
             {"model", {{"outputs", {"y\xfe"}}, {"path", "a\\b\xff.onnx"}}},
             {"a/b~", "\xc3"}};
  const std::string text = DumpJson(value);
  ASSERT_EQ(FindInvalidUtf8(text), std::nullopt) << text;
  const json written = json::parse(text);
  EXPECT_EQ(written["argv"][2], "out\\xff");
  EXPECT_EQ(written["model"]["outputs"][0], "y\\xfe");
  EXPECT_EQ(written["model"]["path"], "a\\\\b\\xff.onnx");  // backslashes doubled: reversible
  EXPECT_EQ(written[kEscapedStringsKey],
            json({"/a~1b~0", "/argv/2", "/model/outputs/0", "/model/path"}));
  EXPECT_FALSE(written.contains(kEscapedKeysKey));
  // The value itself is not changed: comparisons and messages keep the real bytes.
  EXPECT_EQ(value["argv"][2], "out\xff");
}

TEST(DumpJson, KeysAreEscapedAndListedToo) {
  const json value{{"histogram", {{"op\xff", 2}, {"Conv", 1}}}};
  const json written = json::parse(DumpJson(value));
  EXPECT_EQ(written["histogram"]["op\\xff"], 2);
  EXPECT_EQ(written["histogram"]["Conv"], 1);
  EXPECT_EQ(written[kEscapedKeysKey], json({"/histogram/op\\xff"}));
}

TEST(DumpJson, ListsNothingWhenAskedNotToOrWhenTheTopIsNoObject) {
  EXPECT_EQ(json::parse(DumpJson(json{{"error", "bad \xff"}}, 2, false)),
            json({{"error", "bad \\xff"}}));
  EXPECT_EQ(json::parse(DumpJson(json::array({"\xff"}))), json::array({"\\xff"}));
  EXPECT_EQ(json::parse(DumpJson(json("\xff"))), json("\\xff"));
}

TEST(RestoreEscapedStrings, GivesBackTheBytesThatWereWritten) {
  const json original{{"argv", {"convgate", "out\xff"}},
                      {"outputs", {{"y\xfe", {{"path", "a\\b\xfd"}}}, {"ok", 1}}},
                      {"plain", "\\xff stays as it was"}};
  json read = json::parse(DumpJson(original));
  internal::RestoreEscapedStrings(read);
  read.erase(kEscapedStringsKey);
  read.erase(kEscapedKeysKey);
  EXPECT_TRUE(read == original) << DumpJson(read);
}

TEST(RestoreEscapedStrings, RefusesListsThatDoNotFitTheDocument) {
  const struct {
    json document;
    std::string path;
    std::string what;
  } cases[] = {
      {{{kEscapedStringsKey, {"/nowhere"}}}, "escaped_strings[0]", "names nothing"},
      {{{kEscapedStringsKey, {"/n"}}, {"n", 1}}, "escaped_strings[0]", "is not a string"},
      {{{kEscapedStringsKey, {"/s"}}, {"s", "a\\b"}}, "escaped_strings[0]", "not a string that"},
      {{{kEscapedStringsKey, "/s"}}, "escaped_strings", "expected an array of strings"},
      {{{kEscapedStringsKey, {"no slash"}}, {"s", "x"}}, "escaped_strings[0]", "names nothing"},
      {{{kEscapedKeysKey, {"/a\\b"}}, {"a\\b", 1}}, "escaped_keys[0]", "not a string that"},
  };
  for (const auto& c : cases) {
    json document = c.document;
    try {
      internal::RestoreEscapedStrings(document);
      ADD_FAILURE() << c.document.dump() << " was accepted";
    } catch (const internal::BadField& bad) {
      EXPECT_EQ(bad.path, c.path) << c.document.dump();
      EXPECT_NE(bad.what.find(c.what), std::string::npos) << bad.what;
    }
  }
}

class ResultFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("convgate_result_files_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(ResultFilesTest, BytesInTheReportAreWrittenNotRefused) {
  const json report{{"argv", {"--out", "\xff"}}};
  ASSERT_TRUE(WriteResultFiles(dir_, report, json{{"error", "\xfe"}}, "<x/>").ok());
  EXPECT_EQ(json::parse(*ReadFile(dir_ / "report.json"))["argv"][1], "\\xff");
  const json verify_result = json::parse(*ReadFile(dir_ / "verify_result.json"));
  EXPECT_EQ(verify_result, json({{"error", "\\xfe"}}));  // its fields are fixed: nothing listed
}

TEST_F(ResultFilesTest, EachFileIsWrittenWhateverBecomesOfTheOthers) {
  std::filesystem::create_directories(dir_ / "report.json" / "blocker");
  std::filesystem::create_directories(dir_ / "junit.xml" / "blocker");
  const Status status = WriteResultFiles(dir_, json::object(), json{{"verify_passed", true}}, "");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("report.json"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("junit.xml"), std::string::npos) << status.message();
  EXPECT_EQ(json::parse(*ReadFile(dir_ / "verify_result.json"))["verify_passed"], true);
}

}  // namespace
}  // namespace convgate::report
