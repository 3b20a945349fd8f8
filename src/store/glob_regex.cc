#include "store/glob_regex.h"

#include <cctype>
#include <string_view>

namespace convgate::store {
namespace {

// The end of the set starting at `open` ('['), or npos when it is not closed.
size_t SetEnd(const std::string& glob, size_t open) {
  size_t at = open + 1;
  if (at < glob.size() && glob[at] == '^') ++at;
  if (at < glob.size() && glob[at] == ']') ++at;  // a leading ']' is a member
  return glob.find(']', at);
}

// A set's members for an ARE bracket expression, where a backslash is an escape.
std::string SetBody(std::string_view members) {
  std::string body;
  for (char c : members) {
    if (c == '\\') body += '\\';
    body += c;
  }
  return body;
}

}  // namespace

std::string GlobToRegex(const std::string& glob) {
  if (glob.empty()) return glob;
  std::string regex = "^";
  for (size_t at = 0; at < glob.size(); ++at) {
    const char c = glob[at];
    if (c == '*') {
      regex += ".*";
    } else if (c == '?') {
      regex += '.';
    } else if (c == '[' && SetEnd(glob, at) != std::string::npos) {
      const size_t end = SetEnd(glob, at);
      regex += '[' + SetBody(std::string_view(glob).substr(at + 1, end - at - 1)) + ']';
      at = end;
    } else if (std::isalnum(static_cast<unsigned char>(c)) ||
               static_cast<unsigned char>(c) >= 0x80) {
      regex += c;  // an escaped letter or digit would mean a class shorthand ("\d") in an ARE
    } else {
      regex += '\\';
      regex += c;
    }
  }
  return regex + "$";
}

}  // namespace convgate::store
