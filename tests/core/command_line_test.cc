#include "convgate/core/command_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace convgate {
namespace {

using Words = std::vector<std::string>;

Words Split(const std::string& text) {
  Result<Words> words = SplitCommandLine(text);
  EXPECT_TRUE(words.ok()) << text << ": " << words.status().ToString();
  return words.ok() ? *words : Words{};
}

TEST(SplitCommandLine, WhitespaceSeparatesWords) {
  EXPECT_EQ(Split("python3 run.py {model} {inputs} {outputs}"),
            (Words{"python3", "run.py", "{model}", "{inputs}", "{outputs}"}));
  EXPECT_EQ(Split("  a \t b\n c  "), (Words{"a", "b", "c"}));
}

TEST(SplitCommandLine, QuotesGroupAndJoinAdjacentText) {
  EXPECT_EQ(Split("run 'a b' \"c d\""), (Words{"run", "a b", "c d"}));
  EXPECT_EQ(Split("x'a'b\"c\"y"), (Words{"xabcy"}));
  EXPECT_EQ(Split("--out={outputs} '--name=two words'"),
            (Words{"--out={outputs}", "--name=two words"}));
  EXPECT_EQ(Split("a '' \"\" b"), (Words{"a", "", "", "b"}));
}

TEST(SplitCommandLine, SingleQuotesAreLiteralDoubleQuotesEscapeOnlyQuoteAndBackslash) {
  EXPECT_EQ(Split(R"('a\"b' "c\"d" "e\\f" "g\nh")"),
            (Words{R"(a\"b)", R"(c"d)", R"(e\f)", R"(g\nh)"}));
  EXPECT_EQ(Split(R"(a\ b c\'d)"), (Words{"a b", "c'd"}));
}

TEST(SplitCommandLine, NothingIsExpanded) {
  EXPECT_EQ(Split("echo $HOME ~ *.onnx a|b c;d >out"),
            (Words{"echo", "$HOME", "~", "*.onnx", "a|b", "c;d", ">out"}));
  EXPECT_EQ(Split("python3 -c 'import sys; d = {}; print(d)'"),
            (Words{"python3", "-c", "import sys; d = {}; print(d)"}));
}

TEST(SplitCommandLine, MalformedTemplatesAreInvalidArgument) {
  for (const char* text : {"run 'a b", "run \"a b", "run a\\", "", "   "}) {
    Result<Words> words = SplitCommandLine(text);
    ASSERT_FALSE(words.ok()) << text;
    EXPECT_EQ(words.status().code(), StatusCode::kInvalidArgument) << text;
  }
  EXPECT_NE(SplitCommandLine("run 'a b").status().message().find("unterminated ' quote"),
            std::string::npos);
}

TEST(JoinCommandLine, QuotesOnlyWhatNeedsItAndSplitsBack) {
  EXPECT_EQ(JoinCommandLine({"python3", "run.py", "{model}", "--out={outputs}"}),
            "python3 run.py {model} --out={outputs}");
  const Words tricky = {"a b", "it's", "", "$HOME", "x\"y", "tab\there", "back\\slash"};
  const std::string joined = JoinCommandLine(tricky);
  EXPECT_EQ(Split(joined), tricky) << joined;
}

}  // namespace
}  // namespace convgate
