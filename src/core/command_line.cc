#include "convgate/core/command_line.h"

#include <optional>

namespace convgate {
namespace {

bool IsSeparator(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsPlain(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("_./:=@%+,{}-").find(c) != std::string_view::npos;
}

// Appends the body of a quoted part starting after its opening quote at text[pos]; returns the
// position after the closing quote, or nullopt when there is none.
std::optional<size_t> ReadQuoted(std::string_view text, size_t pos, char quote, std::string& word) {
  while (pos < text.size()) {
    const char c = text[pos];
    if (c == quote) return pos + 1;
    if (quote == '"' && c == '\\' && pos + 1 < text.size() &&
        (text[pos + 1] == '"' || text[pos + 1] == '\\')) {
      word += text[pos + 1];
      pos += 2;
      continue;
    }
    word += c;
    ++pos;
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<std::string>> SplitCommandLine(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // true once the current word has begun, even if empty ('')
  size_t pos = 0;
  while (pos < text.size()) {
    const char c = text[pos];
    if (IsSeparator(c)) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      ++pos;
    } else if (c == '\'' || c == '"') {
      std::optional<size_t> next = ReadQuoted(text, pos + 1, c, word);
      if (!next) {
        return Status::InvalidArgument("unterminated " + std::string(1, c) + " quote in command '" +
                                       std::string(text) + "'");
      }
      pos = *next;
      in_word = true;
    } else if (c == '\\') {
      if (pos + 1 == text.size()) {
        return Status::InvalidArgument("command '" + std::string(text) +
                                       "' ends with a lone backslash");
      }
      word += text[pos + 1];
      pos += 2;
      in_word = true;
    } else {
      word += c;
      ++pos;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return Status::InvalidArgument("empty command");
  return words;
}

std::string JoinCommandLine(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& arg : argv) {
    if (!joined.empty()) joined += ' ';
    bool plain = !arg.empty();
    for (char c : arg) plain = plain && IsPlain(c);
    if (plain) {
      joined += arg;
      continue;
    }
    // Inside '...' nothing is special except ' itself, written as '\'' (close, escaped, reopen).
    joined += '\'';
    for (char c : arg) joined += c == '\'' ? std::string("'\\''") : std::string(1, c);
    joined += '\'';
  }
  return joined;
}

}  // namespace convgate
