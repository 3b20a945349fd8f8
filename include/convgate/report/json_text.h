// JSON text that is always valid: the one way convgate turns a JSON value into text (report.json,
// --json on stdout, inspect --json, ...).
//
// JSON can only hold UTF-8, and nlohmann's dump throws on anything else. The strings a report
// carries are bytes that nothing forces to be UTF-8: model input/output names and producer
// strings, paths, argv, numpy byte-string (|S) values, an exec runner's stderr. Escaping them
// where they are dumped, rather than where each enters a report, covers every field, the ones
// added later included, and leaves the in-memory report holding the real bytes (comparison and
// messages use those).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace convgate::report {

// The members DumpJson adds to an object at the top when it escaped something: the JSON pointers
// (RFC 6901) of every string value, and of every member whose key, it escaped.
inline constexpr char kEscapedStringsKey[] = "escaped_strings";
inline constexpr char kEscapedKeysKey[] = "escaped_keys";

// `value` as JSON text, `indent` as nlohmann::json::dump (-1: compact). Never throws: every string
// value and object key that is not valid UTF-8 is written as EscapeInvalidUtf8 spells it (each bad
// byte `\xNN`, each backslash `\\`). With `list_escaped` and an object at the top, the pointers of
// what was escaped are listed under kEscapedStringsKey and kEscapedKeysKey, so a reader can restore
// the bytes exactly (RestoreEscapedStrings); verify_result.json, whose fields are fixed, passes
// false. Valid UTF-8 is written as it is, and then nothing is listed.
std::string DumpJson(const nlohmann::json& value, int indent = -1, bool list_escaped = true);

}  // namespace convgate::report
