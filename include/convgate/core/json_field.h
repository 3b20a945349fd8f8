// Typed reads of one field of a JSON object that may come from anywhere (a runner's answer, a
// cache record, a config.json): the fallback when the field is absent or of another type.
// nlohmann::json::value() throws type_error for a present field of another type, which on
// untrusted input is a crash (found by fuzz/runner_lines_fuzz.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace convgate {

inline std::string JsonTextOr(const nlohmann::json& object, const char* key, std::string fallback) {
  if (!object.is_object()) return fallback;
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : fallback;
}

inline bool JsonBoolOr(const nlohmann::json& object, const char* key, bool fallback) {
  if (!object.is_object()) return fallback;
  auto found = object.find(key);
  return found != object.end() && found->is_boolean() ? found->get<bool>() : fallback;
}

inline int64_t JsonIntOr(const nlohmann::json& object, const char* key, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto found = object.find(key);
  return found != object.end() && found->is_number_integer() ? found->get<int64_t>() : fallback;
}

}  // namespace convgate
