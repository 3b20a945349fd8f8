#include "backends/opencv/opencv_message.h"

#include <regex>

namespace convgate::backends {
namespace {

// Long enough for a node name and OpenCV's explanation; a whole nested trace is not useful in a
// one-line error and the report keeps messages whole anyway.
constexpr size_t kMaxMessageChars = 400;

// Joins the lines with single spaces, dropping the "> " prefixes OpenCV adds per rethrow level.
std::string FlattenLines(std::string_view text) {
  std::string joined;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    while (!line.empty() && (line.front() == '>' || line.front() == ' ' || line.front() == '\t')) {
      line.remove_prefix(1);
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
    if (!line.empty()) joined += (joined.empty() ? "" : " ") + std::string(line);
    begin = end + 1;
  }
  return joined;
}

}  // namespace

std::string CleanOpenCvMessage(std::string_view what) {
  static const std::regex kLocation(R"(OpenCV\([^)]*\) \S+:\d+: error: \(-?\d+:([^)]*)\) ?)");
  static const std::regex kFunction(R"( ?in function '[^']*')");
  std::string text = FlattenLines(what);
  std::string cleaned;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), kLocation), end; it != end; ++it) {
    cleaned.append(last, text.cbegin() + it->position());
    if ((*it)[1] == "Assertion failed") cleaned += "assertion failed: ";
    last = text.cbegin() + it->position() + it->length();
  }
  cleaned.append(last, text.cend());
  cleaned = std::regex_replace(cleaned, kFunction, "");
  cleaned = std::regex_replace(cleaned, std::regex("  +"), " ");
  while (!cleaned.empty() && (cleaned.front() == ' ' || cleaned.front() == ':')) {
    cleaned.erase(cleaned.begin());
  }
  while (!cleaned.empty() && cleaned.back() == ' ') cleaned.pop_back();
  if (cleaned.empty()) return FlattenLines(what);
  if (cleaned.size() > kMaxMessageChars) cleaned = cleaned.substr(0, kMaxMessageChars) + "...";
  return cleaned;
}

}  // namespace convgate::backends
