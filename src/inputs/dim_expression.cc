#include "inputs/dim_expression.h"

#include <cctype>
#include <limits>

namespace convgate::inputs::internal {
namespace {

struct Token {
  enum Kind { kName, kNumber, kOperator } kind;
  std::string text;
};

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// Operands and operators alternating, starting and ending with an operand, at least one
// operator; nullopt otherwise.
std::optional<std::vector<Token>> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ') {
      ++i;
    } else if (c == '+' || c == '-' || c == '*') {
      tokens.push_back({Token::kOperator, std::string(1, c)});
      ++i;
    } else if (NameChar(c)) {
      size_t end = i;
      while (end < text.size() && NameChar(text[end])) ++end;
      std::string word(text.substr(i, end - i));
      bool digits = true;
      for (char d : word) digits = digits && std::isdigit(static_cast<unsigned char>(d)) != 0;
      tokens.push_back({digits ? Token::kNumber : Token::kName, std::move(word)});
      i = end;
    } else {
      return std::nullopt;
    }
  }
  if (tokens.size() < 3 || tokens.size() % 2 == 0) return std::nullopt;
  for (size_t k = 0; k < tokens.size(); ++k) {
    const bool operand_expected = k % 2 == 0;
    if (operand_expected == (tokens[k].kind == Token::kOperator)) return std::nullopt;
  }
  return tokens;
}

std::optional<int64_t> Checked(__int128 value) {
  if (value < 0 || value > std::numeric_limits<int64_t>::max()) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace

std::optional<std::vector<std::string>> ExpressionParts(std::string_view symbol) {
  std::optional<std::vector<Token>> tokens = Tokenize(symbol);
  if (!tokens) return std::nullopt;
  std::vector<std::string> names;
  for (const Token& token : *tokens) {
    if (token.kind == Token::kName) names.push_back(token.text);
  }
  return names;
}

std::optional<int64_t> EvaluateDimExpression(
    std::string_view symbol, const std::function<int64_t(const std::string&)>& value_of) {
  std::optional<std::vector<Token>> tokens = Tokenize(symbol);
  if (!tokens) return std::nullopt;
  const auto operand = [&](const Token& token) -> std::optional<__int128> {
    if (token.kind == Token::kName) return value_of(token.text);
    if (token.text.size() > 18) return std::nullopt;
    return std::stoll(token.text);
  };
  // Sum of products: `term` accumulates a run of '*', `sum` the terms with their signs.
  __int128 sum = 0;
  std::optional<__int128> term = operand((*tokens)[0]);
  int sign = 1;
  for (size_t k = 1; k < tokens->size() && term; k += 2) {
    const std::string& op = (*tokens)[k].text;
    std::optional<__int128> next = operand((*tokens)[k + 1]);
    if (!next) return std::nullopt;
    if (op == "*") {
      term = *term * *next;
      if (!Checked(*term)) return std::nullopt;
    } else {
      sum += sign * *term;
      sign = op == "+" ? 1 : -1;
      term = next;
    }
  }
  if (!term) return std::nullopt;
  return Checked(sum + sign * *term);
}

}  // namespace convgate::inputs::internal
