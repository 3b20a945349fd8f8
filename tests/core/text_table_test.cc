#include "convgate/core/text_table.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(TextTableTest, ColumnsAreAsWideAsTheirWidestCellAndRowsEndClean) {
  TextTable table({"entry", "verdict", "error"});
  table.AddRow({"a", "PASS", ""});
  table.AddRow({"longer-name", "FAIL", "outside atol"});
  EXPECT_EQ(table.Render(),
            "entry        verdict  error\n"
            "a            PASS\n"
            "longer-name  FAIL     outside atol\n");
}

// An escape sequence in a cell cannot drive the terminal, and the column is sized to what shows.
TEST(TextTableTest, ControlBytesAreEscapedBeforeColumnsAreSized) {
  TextTable table({"name", "x"});
  table.AddRow({"a\x1b[2Jb", "1"});
  EXPECT_EQ(table.Render(),
            "name       x\n"
            "a\\x1b[2Jb  1\n");
}

TEST(TextTableTest, ColorWrapsARowOnlyWhenAsked) {
  TextTable table({"h"});
  table.AddRow({"bad"}, kRed);
  EXPECT_EQ(table.Render(false), "h\nbad\n");
  EXPECT_EQ(table.Render(true),
            std::string(kBold) + "h" + kReset + "\n" + kRed + "bad" + kReset + "\n");
}

}  // namespace
}  // namespace convgate
