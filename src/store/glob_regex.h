// SQLite's GLOB (what `convgate history PATTERN` means on every backend) as a POSIX regular
// expression for PostgreSQL's `~`, so a pattern selects the same entries whichever store holds
// them.
#pragma once

#include <string>

namespace convgate::store {

// "*" any run of characters, "?" one character, "[...]" and "[^...]" a set (a ']' right after
// '[' or '[^' belongs to the set), everything else literal; case-sensitive; anchored at both ends.
// An unclosed '[' is literal. "" stays "" (no filter).
std::string GlobToRegex(const std::string& glob);

}  // namespace convgate::store
