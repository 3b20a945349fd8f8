#include "convgate/inputs/input_options.h"

#include <charconv>
#include <cmath>

#include "convgate/core/scoped.h"

namespace convgate::inputs {
namespace {

constexpr std::string_view kRangeSyntax =
    "expected [lo,hi] or [lo,hi) with finite numbers lo <= hi, e.g. [0,1]";
constexpr std::string_view kFillSyntax = "expected zeros, ones, uniform or normal";
constexpr std::string_view kDimSyntax =
    "expected SYMBOL=VALUE with VALUE an integer >= 0, e.g. batch=4";

std::string Quote(std::string_view text) { return "'" + std::string(text) + "'"; }

std::string_view Trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

// Parses the whole of `text` (already trimmed) as a finite double. from_chars takes no '+', so
// strip one: "+1e-3" is a natural thing to type.
std::optional<double> ParseFiniteDouble(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

// Prefixes a value's parse error with the whole flag argument when the value was scoped to an
// input, so the user sees which of several arguments was wrong.
Status InFlag(Status status, std::string_view flag, std::string_view text,
              const ScopedValue& scoped) {
  if (status.ok() || scoped.name.empty()) return status;
  return status.WithContext(std::string(flag) + " " + Quote(text));
}

}  // namespace

std::string_view FillName(Fill fill) {
  switch (fill) {
    case Fill::kZeros:
      return "zeros";
    case Fill::kOnes:
      return "ones";
    case Fill::kUniform:
      return "uniform";
    case Fill::kNormal:
      return "normal";
  }
  return "unknown";
}

Result<Fill> ParseFill(std::string_view text) {
  for (Fill fill : {Fill::kZeros, Fill::kOnes, Fill::kUniform, Fill::kNormal}) {
    if (text == FillName(fill)) return fill;
  }
  return Status::InvalidArgument("bad fill " + Quote(text) + ": " + std::string(kFillSyntax));
}

Result<ValueRange> ParseValueRange(std::string_view text) {
  const auto bad = [text](std::string_view why) {
    return Status::InvalidArgument("bad value range " + Quote(text) + ": " + std::string(why));
  };
  std::string_view body = Trim(text);
  const bool open = !body.empty() && body.front() == '[';
  const bool close = !body.empty() && (body.back() == ']' || body.back() == ')');
  if (open != close) return bad(kRangeSyntax);
  const bool hi_exclusive = close && body.back() == ')';
  if (open) body = body.substr(1, body.size() - 2);
  const size_t comma = body.find(',');
  if (comma == std::string_view::npos || body.find(',', comma + 1) != std::string_view::npos) {
    return bad(kRangeSyntax);
  }
  const std::optional<double> lo = ParseFiniteDouble(Trim(body.substr(0, comma)));
  const std::optional<double> hi = ParseFiniteDouble(Trim(body.substr(comma + 1)));
  if (!lo || !hi) return bad(kRangeSyntax);
  if (*lo > *hi) return bad("lo is greater than hi; " + std::string(kRangeSyntax));
  return ValueRange{*lo, *hi, hi_exclusive};
}

Result<std::pair<std::string, int64_t>> ParseDimBinding(std::string_view text) {
  const auto bad = [text]() {
    return Status::InvalidArgument("bad dim binding " + Quote(text) + ": " +
                                   std::string(kDimSyntax));
  };
  const size_t equals = text.rfind('=');
  if (equals == std::string_view::npos) return bad();
  const std::string_view symbol = Trim(text.substr(0, equals));
  const std::string_view number = Trim(text.substr(equals + 1));
  int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (symbol.empty() || number.empty() || ec != std::errc() ||
      ptr != number.data() + number.size() || value < 0) {
    return bad();
  }
  return std::pair<std::string, int64_t>(std::string(symbol), value);
}

Status AddValueRange(std::string_view text, InputOptions& options) {
  const ScopedValue scoped = SplitScoped(text);
  Result<ValueRange> range = ParseValueRange(scoped.value);
  if (!range.ok()) return InFlag(range.status(), "--val-range", text, scoped);
  if (scoped.name.empty()) {
    options.range = *range;
  } else {
    options.range_per_input[scoped.name] = *range;
  }
  return Status::OK();
}

Status AddFill(std::string_view text, InputOptions& options) {
  const ScopedValue scoped = SplitScoped(text);
  Result<Fill> fill = ParseFill(scoped.value);
  if (!fill.ok()) return InFlag(fill.status(), "--fill", text, scoped);
  if (scoped.name.empty()) {
    options.fill = *fill;
    options.fill_given = true;
  } else {
    options.fill_per_input[scoped.name] = *fill;
  }
  return Status::OK();
}

Status AddShape(std::string_view text, InputOptions& options) {
  const ScopedValue scoped = SplitScoped(text);
  if (scoped.name.empty()) {
    return Status::InvalidArgument("bad --shape " + Quote(text) +
                                   ": expected NAME:DIMS naming one input, e.g. x:1x3x224x224");
  }
  Result<Shape> shape = ParseShape(scoped.value);
  if (!shape.ok()) return InFlag(shape.status(), "--shape", text, scoped);
  options.shape_per_input.insert_or_assign(scoped.name, std::move(shape).value());
  return Status::OK();
}

Status AddDimBinding(std::string_view text, InputOptions& options) {
  CONVGATE_ASSIGN_OR_RETURN(auto binding, ParseDimBinding(text));
  options.dim_per_symbol[binding.first] = binding.second;
  return Status::OK();
}

}  // namespace convgate::inputs
