#include <vector>

#include "convgate/core/utf8.h"
#include "convgate/report/json_text.h"

namespace convgate::report {
namespace {

using nlohmann::json;

bool IsUtf8(const std::string& text) { return !FindInvalidUtf8(text).has_value(); }

// Whether any string value or key in `value` is not UTF-8. Almost never: then nothing is copied.
bool NeedsEscaping(const json& value) {
  if (value.is_string()) return !IsUtf8(value.get_ref<const std::string&>());
  if (!value.is_structured()) return false;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (value.is_object() && !IsUtf8(it.key())) return true;
    if (NeedsEscaping(it.value())) return true;
  }
  return false;
}

// A key as an RFC 6901 reference token: '~' is written "~0" and '/' "~1".
std::string PointerToken(const std::string& key) {
  std::string token;
  for (char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

struct Escaped {
  std::vector<std::string> strings;  // pointers of string values
  std::vector<std::string> keys;     // pointers of members whose key was escaped
};

void EscapeInPlace(json& value, const std::string& pointer, Escaped& escaped);

// An object whose keys include bad ones is rebuilt with them escaped (keys cannot be renamed in
// place). An escaped key equal to a key already there (a raw 0xFF beside a literal "\xff") loses to
// it: nothing convgate writes keys both ways.
void EscapeKeys(json& object, const std::string& pointer, Escaped& escaped) {
  json rebuilt = json::object();
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (IsUtf8(it.key())) {
      rebuilt.emplace(it.key(), std::move(it.value()));
      continue;
    }
    const std::string key = EscapeInvalidUtf8(it.key());
    escaped.keys.push_back(pointer + "/" + PointerToken(key));
    rebuilt.emplace(key, std::move(it.value()));
  }
  object = std::move(rebuilt);
}

void EscapeInPlace(json& value, const std::string& pointer, Escaped& escaped) {
  if (value.is_string()) {
    std::string& text = value.get_ref<std::string&>();
    if (IsUtf8(text)) return;
    text = EscapeInvalidUtf8(text);
    escaped.strings.push_back(pointer);
    return;
  }
  if (value.is_array()) {
    for (size_t idx = 0; idx < value.size(); ++idx) {
      EscapeInPlace(value[idx], pointer + "/" + std::to_string(idx), escaped);
    }
    return;
  }
  if (!value.is_object()) return;
  bool bad_key = false;
  for (auto it = value.begin(); it != value.end() && !bad_key; ++it) bad_key = !IsUtf8(it.key());
  if (bad_key) EscapeKeys(value, pointer, escaped);
  for (auto it = value.begin(); it != value.end(); ++it) {
    EscapeInPlace(it.value(), pointer + "/" + PointerToken(it.key()), escaped);
  }
}

}  // namespace

std::string DumpJson(const nlohmann::json& value, int indent, bool list_escaped) {
  // After escaping no string is invalid; the replace handler is the second guard that makes dump()
  // unable to throw at all (it is nlohmann's only throw on a well-formed value).
  constexpr json::error_handler_t kNeverThrow = json::error_handler_t::replace;
  if (!NeedsEscaping(value)) return value.dump(indent, ' ', false, kNeverThrow);
  json copy = value;
  Escaped escaped;
  EscapeInPlace(copy, "", escaped);
  if (list_escaped && copy.is_object()) {
    if (!escaped.strings.empty()) copy[kEscapedStringsKey] = escaped.strings;
    if (!escaped.keys.empty()) copy[kEscapedKeysKey] = escaped.keys;
  }
  return copy.dump(indent, ' ', false, kNeverThrow);
}

}  // namespace convgate::report
