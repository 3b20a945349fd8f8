#include "convgate/core/redact.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace convgate {
namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The end of the word that starts at `from`: the next white space, or the end.
size_t WordEnd(const std::string& text, size_t from) {
  while (from < text.size() && !IsSpace(text[from])) ++from;
  return from;
}

// Replaces the userinfo password of every "scheme://user:password@host" in `text`.
std::string RedactUrlPasswords(std::string text) {
  size_t scheme = 0;
  while ((scheme = text.find("://", scheme)) != std::string::npos) {
    const size_t authority = scheme + 3;
    const size_t word_end = WordEnd(text, authority);
    size_t limit = text.find_first_of("?#", authority);
    limit = std::min(limit == std::string::npos ? text.size() : limit, word_end);
    const size_t at = limit == authority ? std::string::npos : text.rfind('@', limit - 1);
    if (at != std::string::npos && at >= authority) {
      const size_t colon = text.find(':', authority);
      if (colon != std::string::npos && colon < at) {
        text.replace(colon + 1, at - colon - 1, kRedacted);
      }
    }
    scheme = authority;
  }
  return text;
}

// Replaces the value of every "password=VALUE" that starts a word, a URL query parameter (after
// '?' or '&', ended by '&' or '#') or a libpq keyword (ended by white space, or quoted).
std::string RedactPasswordValues(std::string text) {
  constexpr std::string_view kKey = "password=";
  size_t at = 0;
  while (at + kKey.size() <= text.size()) {
    size_t found = std::string::npos;
    for (size_t i = at; i + kKey.size() <= text.size(); ++i) {
      bool same = true;
      for (size_t k = 0; k < kKey.size() && same; ++k) {
        same = std::tolower(static_cast<unsigned char>(text[i + k])) == kKey[k];
      }
      if (same) {
        found = i;
        break;
      }
    }
    if (found == std::string::npos) break;
    const size_t value = found + kKey.size();
    const char before = found == 0 ? ' ' : text[found - 1];
    const bool query = before == '?' || before == '&';
    // "--password=..." or "x-password=..." is a word's start too: a flag that takes a password.
    if (!query && !IsSpace(before) && before != '-' && before != '=' && found != 0) {
      at = value;
      continue;
    }
    size_t end = value;
    if (!query && end < text.size() && text[end] == '\'') {
      // A quoted keyword value: up to the closing quote, backslash escapes included.
      for (++end; end < text.size() && text[end] != '\''; ++end) {
        if (text[end] == '\\') ++end;
      }
      end = std::min(end + 1, text.size());
    } else {
      while (end < text.size() && !IsSpace(text[end]) &&
             !(query && (text[end] == '&' || text[end] == '#'))) {
        ++end;
      }
    }
    text.replace(value, end - value, kRedacted);
    at = value + kRedacted.size();
  }
  return text;
}

// Flags whose whole value is a secret.
constexpr std::array<std::string_view, 1> kSecretFlags = {"--token"};

}  // namespace

std::string RedactPasswords(std::string text) {
  return RedactPasswordValues(RedactUrlPasswords(std::move(text)));
}

std::vector<std::string> RedactCommandLine(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size());
  bool secret_next = false;
  for (const std::string& arg : argv) {
    if (secret_next) {
      out.emplace_back(kRedacted);
      secret_next = false;
      continue;
    }
    bool done = false;
    for (std::string_view flag : kSecretFlags) {
      if (arg == flag) {
        secret_next = true;
      } else if (StartsWith(arg, std::string(flag) + "=")) {
        out.push_back(std::string(flag) + "=" + std::string(kRedacted));
        done = true;
      }
    }
    if (!done) out.push_back(RedactPasswords(arg));
  }
  return out;
}

}  // namespace convgate
