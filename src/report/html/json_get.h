// Reading report.json documents that may have any shape (a saved file, hand-edited or from
// another version): a missing or mistyped field reads as empty, never as an exception.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace convgate::report::html {

// The member `key` of `object`, or null (operator[] on a const json must not be asked for a
// missing key).
inline const nlohmann::json& Get(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// A member as text: a string as it is, any other value as JSON, a missing one as "".
inline std::string Text(const nlohmann::json& object, const char* key) {
  const nlohmann::json& value = Get(object, key);
  if (value.is_null()) return "";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

inline double Number(const nlohmann::json& object, const char* key, double otherwise = 0) {
  const nlohmann::json& value = Get(object, key);
  return value.is_number() ? value.get<double>() : otherwise;
}

// A per-node record's name for people: the node's name, or for an unnamed node (exporters leave
// Constants unnamed) what it is and what it produces: "unnamed Constant -> bn.w_2".
inline std::string NodeLabel(const nlohmann::json& node) {
  const std::string name = Text(node, "node");
  if (!name.empty()) return name;
  const std::string op = Text(node, "op_type");
  const std::string tensor = Text(node, "tensor");
  return "unnamed " + (op.empty() ? std::string("node") : op) +
         (tensor.empty() ? "" : " -> " + tensor);
}

}  // namespace convgate::report::html
