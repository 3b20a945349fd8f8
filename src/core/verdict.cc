#include "convgate/core/verdict.h"

namespace convgate {

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kError:
      return "error";
  }
  return "error";
}

std::optional<Verdict> ParseVerdict(std::string_view name) {
  for (Verdict verdict : {Verdict::kPass, Verdict::kFail, Verdict::kError}) {
    if (VerdictName(verdict) == name) return verdict;
  }
  return std::nullopt;
}

}  // namespace convgate
