#include "convgate/compare/agreement_check.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace convgate::compare {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "top1" -> k 1; the metric text is already lower-case.
Status ParseMetric(std::string_view metric, AgreementCheck& check) {
  if (metric == "flip_rate") {
    check.metric = AgreementMetric::kFlipRate;
  } else if (metric == "flips") {
    check.metric = AgreementMetric::kFlips;
  } else if (metric == "diagonal") {
    check.metric = AgreementMetric::kDiagonal;
  } else if (metric.rfind("top", 0) == 0) {
    check.metric = AgreementMetric::kTopK;
    const std::string_view digits = metric.substr(3);
    const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), check.k);
    if (digits.empty() || parsed.ec != std::errc() || parsed.ptr != digits.end() || check.k < 1) {
      return Status::InvalidArgument("'" + std::string(metric) +
                                     "' needs a positive integer k after 'top' (top1, top5)");
    }
  } else {
    return Status::InvalidArgument("unknown metric '" + std::string(metric) +
                                   "' (known: top1, top<K>, flip_rate, flips, diagonal)");
  }
  return Status::OK();
}

// Splits "top1>=0.5" at the comparison. Returns the comparison's position, or npos.
size_t ComparisonStart(std::string_view spec) { return spec.find_first_of("<>=!"); }

Status ParseComparison(std::string_view text, AgreementCheck& check) {
  static constexpr std::pair<std::string_view, Comparison> kOps[] = {
      {">=", Comparison::kGreaterEqual},
      {"<=", Comparison::kLessEqual},
      {"==", Comparison::kEqual},
      {">", Comparison::kGreater},
      {"<", Comparison::kLess}};
  for (const auto& [spelling, op] : kOps) {
    if (text.rfind(spelling, 0) != 0) continue;
    check.op = op;
    const std::string_view number = Trim(text.substr(spelling.size()));
    const auto parsed = std::from_chars(number.data(), number.data() + number.size(), check.value);
    if (number.empty() || parsed.ec != std::errc() || parsed.ptr != number.end() ||
        !std::isfinite(check.value)) {
      return Status::InvalidArgument("'" + std::string(number) + "' is not a finite number");
    }
    return Status::OK();
  }
  return Status::InvalidArgument("unknown comparison in '" + std::string(text) +
                                 "' (use >=, >, <=, < or ==)");
}

Status CheckRange(const AgreementCheck& check) {
  const bool rate =
      check.metric == AgreementMetric::kTopK || check.metric == AgreementMetric::kFlipRate;
  if (rate && (check.value < 0.0 || check.value > 1.0)) {
    return Status::InvalidArgument("a rate is a fraction in [0, 1], got " +
                                   std::to_string(check.value));
  }
  if (check.metric == AgreementMetric::kFlips && check.value < 0.0) {
    return Status::InvalidArgument("a flip count is >= 0");
  }
  return Status::OK();
}

Status ParseSpec(std::string_view spec, AgreementCheck& check) {
  const size_t op_pos = ComparisonStart(spec);
  const std::string metric = Lower(Trim(spec.substr(0, op_pos)));
  CONVGATE_RETURN_IF_ERROR(ParseMetric(metric, check));
  if (check.metric == AgreementMetric::kDiagonal) {
    if (op_pos != std::string_view::npos) {
      return Status::InvalidArgument("'diagonal' takes no comparison (write NAME:diagonal)");
    }
    return Status::OK();
  }
  if (op_pos == std::string_view::npos) {
    return Status::InvalidArgument("'" + metric + "' needs a comparison and a value, e.g. " +
                                   metric + (metric == "flips" ? "<=0" : ">=0.999"));
  }
  CONVGATE_RETURN_IF_ERROR(ParseComparison(spec.substr(op_pos), check));
  return CheckRange(check);
}

}  // namespace

std::string_view ComparisonText(Comparison op) {
  switch (op) {
    case Comparison::kGreaterEqual:
      return ">=";
    case Comparison::kGreater:
      return ">";
    case Comparison::kLessEqual:
      return "<=";
    case Comparison::kLess:
      return "<";
    case Comparison::kEqual:
      return "==";
  }
  return "?";
}

Result<AgreementCheck> ParseAgreementCheck(std::string_view text) {
  auto invalid = [&](const Status& why) {
    return Status::InvalidArgument("invalid agreement check '" + std::string(text) +
                                   "': " + why.message());
  };
  AgreementCheck check;
  check.text = std::string(text);
  // The metric never holds ':', so the last ':' ends the name ("logits:0:top1>=1").
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return invalid(
        Status::InvalidArgument("expected NAME:METRIC, e.g. logits:top1>=0.999 or label:diagonal"));
  }
  check.output = std::string(text.substr(0, colon));
  if (check.output.empty()) {
    return invalid(Status::InvalidArgument("the output name before ':' is empty"));
  }
  Status parsed = ParseSpec(text.substr(colon + 1), check);
  if (!parsed.ok()) return invalid(parsed);
  return check;
}

std::vector<std::string> AgreementConfig::NamedOutputs() const {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const std::string& name : classifiers) add(name);
  for (const AgreementCheck& check : checks) add(check.output);
  return names;
}

std::optional<PredictionKind> PredictionKindFor(std::string_view name, DType dtype,
                                                const Shape& shape, bool named) {
  const bool label_dtype = IsInteger(dtype) || dtype == DType::kBool;
  if (named) {
    if (IsFloating(dtype)) return PredictionKind::kScores;
    if (label_dtype) return PredictionKind::kLabels;
    return std::nullopt;
  }
  const std::string lower = Lower(name);
  auto contains_any = [&](std::initializer_list<std::string_view> words) {
    return std::any_of(words.begin(), words.end(),
                       [&](std::string_view word) { return lower.find(word) != lower.npos; });
  };
  // bool outputs are masks far more often than binary predictions: only a name makes them labels.
  if (IsInteger(dtype) && contains_any({"label", "class", "pred", "argmax"})) {
    return PredictionKind::kLabels;
  }
  const bool score_shape = (shape.rank() == 1 || shape.rank() == 2) && shape.dims().back() >= 2;
  if (IsFloating(dtype) && score_shape &&
      contains_any({"logit", "prob", "score", "softmax", "class"})) {
    return PredictionKind::kScores;
  }
  return std::nullopt;
}

}  // namespace convgate::compare
