// The one rule that splits "NAME:VALUE" command-line values.
#include "convgate/core/scoped.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

TEST(SplitScoped, SplitsAtTheLastColonOutsideBrackets) {
  struct Case {
    std::string text;
    std::string name;
    std::string value;
  };
  const Case cases[] = {
      {"[0,1]", "", "[0,1]"},
      {"0,1", "", "0,1"},
      {"-1e-3,2.5", "", "-1e-3,2.5"},
      {"x:[0,1]", "x", "[0,1]"},
      {"input:0:[0,1]", "input:0", "[0,1]"},
      {"input:0:1x3", "input:0", "1x3"},
      {"x:1x3x4", "x", "1x3x4"},
      {"x:-1,1", "x", "-1,1"},
      {"uniform", "", "uniform"},
      {"mask:ones", "mask", "ones"},
      {"x[0]:[0,1]", "x[0]", "[0,1]"},
      {"x:[0,1)", "x", "[0,1)"},
      {"[0,1)", "", "[0,1)"},
      {"x:[1,3,48,192]", "x", "[1,3,48,192]"},
      {":[0,1]", "", "[0,1]"},
      {"", "", ""},
  };
  for (const Case& c : cases) {
    const ScopedValue scoped = SplitScoped(c.text);
    EXPECT_EQ(scoped.name, c.name) << c.text;
    EXPECT_EQ(scoped.value, c.value) << c.text;
  }
}

}  // namespace
}  // namespace convgate
