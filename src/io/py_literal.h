// A parser for the small subset of Python literal syntax that .npy headers use: a dict of string
// keys whose values are strings, True/False/None, integers, and tuples/lists/dicts of those
// (numpy writes the header with repr() and reads it back with ast.literal_eval). Private to io.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::io::internal {

struct PyLiteral {
  enum class Kind { kString, kBool, kNone, kInt, kTuple, kList, kDict };

  Kind kind = Kind::kNone;
  std::string text;               // kString
  bool boolean = false;           // kBool
  int64_t integer = 0;            // kInt
  std::vector<PyLiteral> items;   // kTuple, kList; the values of a kDict
  std::vector<std::string> keys;  // kDict, parallel to items

  // The value of `key` in a kDict, or null.
  const PyLiteral* Find(std::string_view key) const;
};

// "string", "tuple", ... for messages.
std::string_view PyLiteralKindName(PyLiteral::Kind kind);

// Parses one literal followed only by whitespace. Errors (DataLoss) say what was expected and at
// which byte offset; the caller adds the file name. Integers outside int64 and nesting deeper than
// 32 levels are rejected rather than risking overflow or stack exhaustion on hostile input.
Result<PyLiteral> ParsePyLiteral(std::string_view text);

}  // namespace convgate::io::internal
