// Typed access to a report.json read back (`convgate check`), naming the field's path in every
// error ("results[3].stats.errors.max_abs_error: expected a number, got \"x\"").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convgate::report::internal {

// Thrown by JsonFields on a missing or mistyped field. Caught by ReadCompareReport: it never
// leaves the report module.
struct BadField {
  std::string path;
  std::string what;
};

// One JSON object and its path from the document root. Holds a reference: the document must
// outlive it.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string path);

  bool Has(std::string_view key) const;
  // The member; throws BadField when missing.
  const nlohmann::json& Raw(std::string_view key) const;
  // A member that must be an object.
  JsonFields Object(std::string_view key) const;
  // Each element of an array member, as an object. Throws unless every element is an object.
  std::vector<JsonFields> Objects(std::string_view key) const;
  // Numbers; report.json writes NaN and Inf as "nan", "inf", "-inf".
  double Number(std::string_view key) const;
  // Absent or null: nullopt.
  std::optional<double> OptionalNumber(std::string_view key) const;
  // An integer that fits int64 (a larger one is refused, not wrapped).
  int64_t Int(std::string_view key) const;
  // A count: an integer >= 0.
  int64_t Count(std::string_view key) const;
  // A number in [lo, hi] (a fraction: [0, 1]); NaN is refused.
  double NumberIn(std::string_view key, double lo, double hi) const;
  // Absent: `fallback` (schema 2 leaves out non-finite counts that are 0); else as Count.
  int64_t CountOr(std::string_view key, int64_t fallback) const;
  bool Bool(std::string_view key) const;
  std::string String(std::string_view key) const;
  // A string that must be one of `allowed` (a verdict, a kind).
  std::string OneOf(std::string_view key, const std::vector<std::string_view>& allowed) const;
  std::vector<std::string> Strings(std::string_view key) const;
  std::vector<int64_t> Ints(std::string_view key) const;
  // An array of finite numbers.
  std::vector<double> Numbers(std::string_view key) const;

  const nlohmann::json& object() const { return json_; }
  const std::string& path() const { return path_; }
  std::string Child(std::string_view key) const;
  [[noreturn]] void Fail(std::string_view key, const std::string& what) const;

 private:
  const nlohmann::json& json_;
  std::string path_;
};

// A JSON number, or one of the strings "nan", "inf", "-inf". Throws BadField naming `path`.
double NumberFrom(const nlohmann::json& value, const std::string& path);

// Puts back the bytes DumpJson escaped (json_text.h): each string its "escaped_strings" lists and
// each key its "escaped_keys" lists gets its raw bytes again, so names and paths read back are the
// ones the report was written from. Throws BadField when a list is malformed or names something
// that is not there or not escaped. A document without the lists is left as it is.
void RestoreEscapedStrings(nlohmann::json& document);

}  // namespace convgate::report::internal
