#include "report/text/markup.h"

#include "convgate/core/utf8.h"

namespace convgate::report {

std::string EscapeMarkup(const std::string& text) {
  const std::string shown = EscapeForDisplay(text);
  std::string out;
  out.reserve(shown.size());
  for (char c : shown) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace convgate::report
