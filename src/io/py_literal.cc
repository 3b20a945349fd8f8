#include "io/py_literal.h"

#include <limits>

namespace convgate::io::internal {
namespace {

// Real headers nest at most two levels (dict -> shape tuple); structured dtypes add a few more.
constexpr int kMaxDepth = 32;
// A .npy header dict has three keys. The cap keeps the duplicate-key check (linear per key) from
// going quadratic on a hostile header of millions of keys.
constexpr size_t kMaxDictKeys = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<PyLiteral> ParseAll() {
    CONVGATE_ASSIGN_OR_RETURN(PyLiteral value, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the literal");
    return value;
  }

 private:
  Status Error(std::string_view problem) const {
    std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end";
    return Status::DataLoss(std::string(problem) + " at offset " + std::to_string(pos_) +
                            " (found " + found + ")");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view token) {
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  Result<PyLiteral> ParseValue(int depth) {
    if (depth > kMaxDepth) return Error("literal nested too deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') return ParseString();
    if (c == '{') return ParseDict(depth);
    if (c == '(') return ParseSequence(depth, PyLiteral::Kind::kTuple, ')');
    if (c == '[') return ParseSequence(depth, PyLiteral::Kind::kList, ']');
    if (c == '-' || (c >= '0' && c <= '9')) return ParseInt();
    PyLiteral value;
    if (Consume("True") || Consume("False")) {
      value.kind = PyLiteral::Kind::kBool;
      value.boolean = text_.substr(0, pos_).ends_with("True");
      return value;
    }
    if (Consume("None")) return value;
    return Error("expected a string, number, True, False, None, tuple, list or dict");
  }

  Result<PyLiteral> ParseString() {
    const char quote = text_[pos_++];
    PyLiteral value;
    value.kind = PyLiteral::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      // numpy never escapes anything in a descr; take the escaped character literally.
      if (text_[pos_] == '\\') ++pos_;
      if (pos_ < text_.size()) value.text.push_back(text_[pos_++]);
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    ++pos_;
    return value;
  }

  Result<PyLiteral> ParseInt() {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
      return Error("expected a digit");
    }
    // Accumulate as a negative number so that INT64_MIN is representable.
    int64_t value = 0;
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_] - '0';
      if (value < (kMin + digit) / 10) return Error("integer does not fit in 64 bits");
      value = value * 10 - digit;
      ++pos_;
    }
    // Python 2 wrote long integers with an 'L' suffix; old .npy files carry it in their shapes.
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    if (!negative && value == kMin) return Error("integer does not fit in 64 bits");
    PyLiteral literal;
    literal.kind = PyLiteral::Kind::kInt;
    literal.integer = negative ? value : -value;
    return literal;
  }

  Result<PyLiteral> ParseSequence(int depth, PyLiteral::Kind kind, char close) {
    ++pos_;  // the opening bracket
    const std::string_view close_token(&close, 1);
    PyLiteral value;
    value.kind = kind;
    bool trailing_comma = false;
    while (true) {
      SkipSpace();
      if (Consume(close_token)) break;
      CONVGATE_ASSIGN_OR_RETURN(PyLiteral item, ParseValue(depth + 1));
      value.items.push_back(std::move(item));
      SkipSpace();
      trailing_comma = Consume(",");
      if (trailing_comma) continue;
      if (Consume(close_token)) break;
      return Error("expected ',' or '" + std::string(close_token) + "'");
    }
    // "(3)" is the integer 3 in Python, not a tuple; numpy always writes "(3,)".
    if (kind == PyLiteral::Kind::kTuple && value.items.size() == 1 && !trailing_comma) {
      PyLiteral inner = std::move(value.items[0]);
      return inner;
    }
    return value;
  }

  Result<PyLiteral> ParseDict(int depth) {
    ++pos_;  // '{'
    PyLiteral value;
    value.kind = PyLiteral::Kind::kDict;
    while (true) {
      SkipSpace();
      if (Consume("}")) break;
      if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
        return Error("expected a string key or '}'");
      }
      if (value.keys.size() >= kMaxDictKeys) return Error("too many keys in a dict");
      CONVGATE_ASSIGN_OR_RETURN(PyLiteral key, ParseString());
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      CONVGATE_ASSIGN_OR_RETURN(PyLiteral item, ParseValue(depth + 1));
      if (value.Find(key.text) != nullptr) return Error("duplicate key '" + key.text + "'");
      value.keys.push_back(std::move(key.text));
      value.items.push_back(std::move(item));
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("}")) break;
      return Error("expected ',' or '}'");
    }
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const PyLiteral* PyLiteral::Find(std::string_view key) const {
  for (size_t key_idx = 0; key_idx < keys.size(); ++key_idx) {
    if (keys[key_idx] == key) return &items[key_idx];
  }
  return nullptr;
}

std::string_view PyLiteralKindName(PyLiteral::Kind kind) {
  switch (kind) {
    case PyLiteral::Kind::kString:
      return "string";
    case PyLiteral::Kind::kBool:
      return "bool";
    case PyLiteral::Kind::kNone:
      return "None";
    case PyLiteral::Kind::kInt:
      return "integer";
    case PyLiteral::Kind::kTuple:
      return "tuple";
    case PyLiteral::Kind::kList:
      return "list";
    case PyLiteral::Kind::kDict:
      return "dict";
  }
  return "unknown";
}

Result<PyLiteral> ParsePyLiteral(std::string_view text) { return Parser(text).ParseAll(); }

}  // namespace convgate::io::internal
