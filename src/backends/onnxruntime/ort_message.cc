#include "backends/onnxruntime/ort_message.h"

#include <regex>

namespace convgate::backends {

std::string CleanOrtMessage(std::string_view message) {
  // A location is "<file>.<ext>:<line> " then __PRETTY_FUNCTION__: optional return type words,
  // a qualified name glued to its parenthesised parameters (which never nest in ORT's code), an
  // optional " const" and " [with T = ...]". Message text has a space before any '(' it contains,
  // so it does not match.
  static const std::regex kSourceLocation(
      R"(\S+\.(cc|h|cpp|hpp):[0-9]+ ([\w:<>,*&~]+ )*?[\w:<>,*&~]+\([^)]*\)( const)?)"
      R"(( \[with [^\]]*\])? )");
  static const std::regex kErrorPrefix(R"(\[ONNXRuntimeError\] : [0-9]+ : [A-Z_]+ : )");
  std::string cleaned = std::regex_replace(std::string(message), kSourceLocation, "");
  cleaned = std::regex_replace(cleaned, kErrorPrefix, "");
  while (!cleaned.empty() && (cleaned.back() == '\n' || cleaned.back() == ' ')) cleaned.pop_back();
  return cleaned;
}

}  // namespace convgate::backends
