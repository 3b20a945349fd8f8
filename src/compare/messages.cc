#include "compare/messages.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "compare/widen.h"
#include "convgate/core/numbers.h"
#include "convgate/core/shape.h"

namespace convgate::compare::internal {
namespace {

// Both values with the fewest significant digits (at least 6; %g drops trailing zeros, so 0.5012
// stays "0.5012") that still tell them apart: two different values never print the same.
std::pair<std::string, std::string> FormatPair(double source, double target) {
  for (int precision = 6; precision < 17; ++precision) {
    std::pair<std::string, std::string> text{FormatSignificant(source, precision),
                                             FormatSignificant(target, precision)};
    const bool distinct = source != target && !std::isnan(source) && !std::isnan(target);
    if (text.first != text.second || !distinct) return text;
  }
  return {FormatSignificant(source, 17), FormatSignificant(target, 17)};
}

// An integer or bool element exactly as stored (no rounding through double).
std::string FormatExactElement(const Tensor& tensor, int64_t flat) {
  uint64_t bits = 0;
  WidenToBits(tensor, flat, std::span<uint64_t>(&bits, 1));
  if (tensor.dtype() == DType::kBool) return bits != 0 ? "true" : "false";
  if (BitsAreSigned(tensor.dtype())) return std::to_string(static_cast<int64_t>(bits));
  return std::to_string(bits);
}

// "source 0.5012, target 0.5123".
std::string FormatElementValues(const Tensor& source, const Tensor& target,
                                const ElementReport& element, bool exact) {
  if (exact) {
    return "source " + FormatExactElement(source, element.flat) + ", target " +
           FormatExactElement(target, element.flat);
  }
  auto [source_text, target_text] = FormatPair(element.source, element.target);
  return "source " + source_text + ", target " + target_text;
}

// "12 of 1000 elements (1.2%)".
std::string CountOf(int64_t count, int64_t total) {
  return std::to_string(count) + " of " + std::to_string(total) + " elements (" +
         FormatPercent(count, total) + "%)";
}

std::string At(const ElementReport& element) { return FormatIndex(element.index); }

ElementReport Locate(const Tensor& source, const Tensor& target, int64_t flat) {
  ElementReport element;
  element.flat = flat;
  element.index = source.shape().Unravel(flat);
  element.source = source.GetDouble(flat);
  element.target = target.GetDouble(flat);
  return element;
}

std::string IntroducedNanMessage(const Tensor& source, const Tensor& target,
                                 const TensorComparison& result) {
  const ElementReport first = Locate(source, target, result.non_finite.first_introduced_nan);
  return "introduced NaN: " + CountOf(result.non_finite.introduced_nan, result.num_elements) +
         " are NaN in the target where the source is finite; first at " + At(first) + " (source " +
         FormatSignificant(first.source, 6) + ")";
}

std::string IntroducedInfMessage(const Tensor& source, const Tensor& target,
                                 const TensorComparison& result) {
  const ElementReport first = Locate(source, target, result.non_finite.first_introduced_inf);
  return "introduced Inf: " + CountOf(result.non_finite.introduced_inf, result.num_elements) +
         " are Inf in the target where the source is finite; first at " + At(first) + " (" +
         FormatElementValues(source, target, first, false) + ")";
}

std::string InheritedMessage(const Tensor& source, const Tensor& target,
                             const TensorComparison& result) {
  const ElementReport first = Locate(source, target, result.non_finite.first_inherited);
  return "inherited non-finite: " + CountOf(result.non_finite.inherited, result.num_elements) +
         " are NaN or Inf in the source and differ in the target, so the source itself is "
         "unstable; first at " +
         At(first) + ": " + FormatElementValues(source, target, first, false);
}

std::string ValueMismatchMessage(const Tensor& source, const Tensor& target, int64_t count,
                                 const ElementReport& worst, const TensorComparison& result) {
  std::string text = CountOf(count, result.num_elements);
  if (result.exact) {
    return text + " differ (integer and bool outputs compare exactly); worst at " + At(worst) +
           ": " + FormatElementValues(source, target, worst, true) + " (|diff| " +
           FormatSignificant(worst.abs_error, 17) + ")";
  }
  return text + " outside atol " + FormatShortest(result.tolerance.atol) + " + rtol " +
         FormatShortest(result.tolerance.rtol) + " * |source|; worst at " + At(worst) + ": " +
         FormatElementValues(source, target, worst, false) + " (|diff| " +
         FormatSignificant(worst.abs_error, 3) + ", allowed " +
         FormatSignificant(worst.allowed, 3) + ")";
}

void AddSharedNotes(TensorComparison& result) {
  const NonFiniteSplit& split = result.non_finite;
  std::vector<std::string>& notes = result.notes;
  if (split.shared_nan > 0) {
    notes.push_back("shared NaN: " + CountOf(split.shared_nan, result.num_elements) +
                    " are NaN in both source and target (treated as equal)");
  }
  if (split.shared_inf > 0) {
    notes.push_back("shared Inf: " + CountOf(split.shared_inf, result.num_elements) +
                    " are the same infinity in both source and target (treated as equal)");
  }
}

}  // namespace

std::string DTypeMismatchMessage(const Tensor& source, const Tensor& target) {
  std::string text = "dtype mismatch: source " + std::string(DTypeName(source.dtype())) +
                     ", target " + std::string(DTypeName(target.dtype()));
  if ((source.dtype() == DType::kString) != (target.dtype() == DType::kString)) {
    text += "; values not compared (strings are not numbers)";
  }
  return text;
}

std::string ShapeMismatchMessage(const Tensor& source, const Tensor& target) {
  std::string text = "shape mismatch: source " + source.shape().ToString() + ", target " +
                     target.shape().ToString();
  if (source.num_elements() != target.num_elements()) {
    text += "; values not compared (" + std::to_string(source.num_elements()) + " vs " +
            std::to_string(target.num_elements()) + " elements)";
  }
  return text;
}

void AddValueMessages(const Tensor& source, const Tensor& target, const ElementReport& worst_value,
                      TensorComparison& result) {
  const NonFiniteSplit& split = result.non_finite;
  if (split.introduced_nan > 0)
    result.failures.push_back(IntroducedNanMessage(source, target, result));
  if (split.introduced_inf > 0)
    result.failures.push_back(IntroducedInfMessage(source, target, result));
  const int64_t value_mismatches =
      result.mismatches - split.introduced_nan - split.introduced_inf - split.inherited;
  if (value_mismatches > 0) {
    result.failures.push_back(
        ValueMismatchMessage(source, target, value_mismatches, worst_value, result));
  }
  if (split.inherited > 0) result.failures.push_back(InheritedMessage(source, target, result));
  AddSharedNotes(result);
}

std::string FormatPercent(int64_t count, int64_t total) {
  if (total <= 0) return "0";
  const double percent = 100.0 * static_cast<double>(count) / static_cast<double>(total);
  for (int precision = 3; precision < 17; ++precision) {
    std::string text = FormatSignificant(percent, precision);
    const bool rounded_to_whole = (text == "100" && count != total) || (text == "0" && count != 0);
    if (!rounded_to_whole) return text;
  }
  return FormatSignificant(percent, 17);
}

}  // namespace convgate::compare::internal
