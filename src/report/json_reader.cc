#include "json_reader.h"

#include <limits>

namespace convgate::report::internal {

using nlohmann::json;

namespace {

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
      return "the string " + value.dump();
    case json::value_t::boolean:
      return value.dump();
    default:
      return "the number " + value.dump();
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
  return value.get<int64_t>();
}

int64_t JsonFields::IntOr(std::string_view key, int64_t fallback) const {
  return Has(key) ? Int(key) : fallback;
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

}  // namespace convgate::report::internal
