#include "report/json/reader.h"

#include <cstdio>
#include <limits>
#include <optional>

#include "convgate/core/utf8.h"
#include "convgate/report/json_text.h"

namespace convgate::report::internal {

using nlohmann::json;

namespace {

// A restored string (RestoreEscapedStrings) may hold any bytes: shown as DumpJson writes it, which
// cannot throw.
std::string ShownValue(const json& value) { return DumpJson(value, -1, /*list_escaped=*/false); }

// "a string", "an array": what was found instead.
std::string KindOf(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "the string " + ShownValue(value);
    case json::value_t::boolean:
      return value.dump();
    default:
      return "the number " + value.dump();
  }
}

// The value at RFC 6901 `pointer`, or BadField at `where`.
json& Resolve(json& document, const std::string& pointer, const std::string& where) {
  try {
    return document.at(json::json_pointer(pointer));
  } catch (const json::exception&) {
    throw BadField{where, "'" + pointer + "' names nothing in the report"};
  }
}

std::string Unescaped(const std::string& text, const std::string& where) {
  std::optional<std::string> raw = UnescapeInvalidUtf8(text);
  if (!raw) throw BadField{where, "'" + text + "' is not a string that convgate escaped"};
  return std::move(*raw);
}

void RestoreStrings(json& document, const std::vector<std::string>& pointers) {
  for (size_t idx = 0; idx < pointers.size(); ++idx) {
    const std::string where = std::string(kEscapedStringsKey) + "[" + std::to_string(idx) + "]";
    json& value = Resolve(document, pointers[idx], where);
    if (!value.is_string()) throw BadField{where, "'" + pointers[idx] + "' is not a string"};
    value = Unescaped(value.get_ref<const std::string&>(), where);
  }
}

// Last listed first: DumpJson lists an object's keys before the keys nested in it, and renaming an
// outer key first would change the pointers of the inner ones.
void RestoreKeys(json& document, const std::vector<std::string>& pointers) {
  for (size_t idx = pointers.size(); idx-- > 0;) {
    const std::string where = std::string(kEscapedKeysKey) + "[" + std::to_string(idx) + "]";
    Resolve(document, pointers[idx], where);
    const json::json_pointer member(pointers[idx]);
    if (member.empty()) throw BadField{where, "the whole report is not a member"};
    json& parent = Resolve(document, member.parent_pointer().to_string(), where);
    if (!parent.is_object()) throw BadField{where, "'" + pointers[idx] + "' is not a member"};
    const std::string key = member.back();
    json value = std::move(parent[key]);
    parent.erase(key);
    parent[Unescaped(key, where)] = std::move(value);
  }
}

}  // namespace

double NumberFrom(const json& value, const std::string& path) {
  if (value.is_number()) return value.get<double>();
  if (value == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (value == "inf") return std::numeric_limits<double>::infinity();
  if (value == "-inf") return -std::numeric_limits<double>::infinity();
  throw BadField{path, "expected a number, got " + KindOf(value)};
}

JsonFields::JsonFields(const json& object, std::string path)
    : json_(object), path_(std::move(path)) {
  if (!json_.is_object()) throw BadField{path_, "expected an object, got " + KindOf(json_)};
}

std::string JsonFields::Child(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void JsonFields::Fail(std::string_view key, const std::string& what) const {
  throw BadField{Child(key), what};
}

bool JsonFields::Has(std::string_view key) const { return json_.contains(key); }

const json& JsonFields::Raw(std::string_view key) const {
  const auto it = json_.find(key);
  if (it == json_.end()) Fail(key, "missing");
  return *it;
}

JsonFields JsonFields::Object(std::string_view key) const {
  return JsonFields(Raw(key), Child(key));
}

std::vector<JsonFields> JsonFields::Objects(std::string_view key) const {
  const json& array = Raw(key);
  if (!array.is_array()) Fail(key, "expected an array, got " + KindOf(array));
  std::vector<JsonFields> out;
  for (size_t idx = 0; idx < array.size(); ++idx) {
    out.emplace_back(array[idx], Child(key) + "[" + std::to_string(idx) + "]");
  }
  return out;
}

double JsonFields::Number(std::string_view key) const { return NumberFrom(Raw(key), Child(key)); }

std::optional<double> JsonFields::OptionalNumber(std::string_view key) const {
  if (!Has(key) || Raw(key).is_null()) return std::nullopt;
  return Number(key);
}

int64_t JsonFields::Int(std::string_view key) const {
  const json& value = Raw(key);
  if (!value.is_number_integer()) Fail(key, "expected an integer, got " + KindOf(value));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    Fail(key, "the integer " + value.dump() + " is out of range");
  }
  return value.get<int64_t>();
}

int64_t JsonFields::Count(std::string_view key) const {
  const int64_t count = Int(key);
  if (count < 0) Fail(key, "expected a count (>= 0), got " + std::to_string(count));
  return count;
}

double JsonFields::NumberIn(std::string_view key, double lo, double hi) const {
  const double value = Number(key);
  if (!(value >= lo && value <= hi)) {
    char range[64];
    std::snprintf(range, sizeof(range), "[%g, %g]", lo, hi);
    Fail(key, "expected a number in " + std::string(range) + ", got " + KindOf(Raw(key)));
  }
  return value;
}

int64_t JsonFields::CountOr(std::string_view key, int64_t fallback) const {
  return Has(key) ? Count(key) : fallback;
}

bool JsonFields::Bool(std::string_view key) const {
  const json& value = Raw(key);
  if (!value.is_boolean()) Fail(key, "expected true or false, got " + KindOf(value));
  return value.get<bool>();
}

std::string JsonFields::String(std::string_view key) const {
  const json& value = Raw(key);
  if (!value.is_string()) Fail(key, "expected a string, got " + KindOf(value));
  return value.get<std::string>();
}

std::string JsonFields::OneOf(std::string_view key,
                              const std::vector<std::string_view>& allowed) const {
  std::string value = String(key);
  std::string listed;
  for (std::string_view option : allowed) {
    if (value == option) return value;
    listed += (listed.empty() ? "" : ", ") + std::string(option);
  }
  Fail(key, "expected one of " + listed + ", got " + KindOf(Raw(key)));
}

std::vector<std::string> JsonFields::Strings(std::string_view key) const {
  const json& value = Raw(key);
  std::vector<std::string> out;
  if (!value.is_array()) Fail(key, "expected an array of strings, got " + KindOf(value));
  for (const json& item : value) {
    if (!item.is_string()) Fail(key, "expected an array of strings, holding " + KindOf(item));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonFields::Ints(std::string_view key) const {
  const json& value = Raw(key);
  std::vector<int64_t> out;
  if (!value.is_array()) Fail(key, "expected an array of integers, got " + KindOf(value));
  for (const json& item : value) {
    if (!item.is_number_integer()) Fail(key, "expected integers, holding " + KindOf(item));
    out.push_back(item.get<int64_t>());
  }
  return out;
}

std::vector<double> JsonFields::Numbers(std::string_view key) const {
  const json& value = Raw(key);
  std::vector<double> out;
  if (!value.is_array()) Fail(key, "expected an array of numbers, got " + KindOf(value));
  for (const json& item : value) {
    if (!item.is_number()) Fail(key, "expected numbers, holding " + KindOf(item));
    out.push_back(item.get<double>());
  }
  return out;
}

void RestoreEscapedStrings(json& document) {
  if (!document.is_object()) return;
  const JsonFields root(document, "");
  if (root.Has(kEscapedStringsKey)) RestoreStrings(document, root.Strings(kEscapedStringsKey));
  if (root.Has(kEscapedKeysKey)) RestoreKeys(document, root.Strings(kEscapedKeysKey));
}

}  // namespace convgate::report::internal
