// Every environment variable convgate reads, in one table: `convgate docs environment` prints it
// as docs/environment.md, and tests/doc/docs_current.py checks that each variable the sources
// name is in it and that the document is current.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace convgate::cli {

struct EnvironmentVariable {
  std::string_view name;
  std::string_view default_value;  // "" when unset means "not used"
  std::string_view meaning;
};

const std::vector<EnvironmentVariable>& EnvironmentVariables();

// The table as Markdown (docs/environment.md).
std::string EnvironmentMarkdown();

}  // namespace convgate::cli
