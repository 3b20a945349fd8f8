#include "convgate/compare/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "compare/messages.h"
#include "convgate/core/numbers.h"
#include "convgate/core/shape.h"

namespace convgate::compare {
namespace {

// The dtype a TensorComparison's description names ("float32[1, 10]" -> float32).
std::optional<DType> DescribedDType(const std::string& description) {
  return ParseDType(std::string_view(description).substr(0, description.find('[')));
}

// A dtype change that is only a floating-point width (float32 -> float16, bfloat16 -> float32):
// the values still mean the same thing, at another precision.
bool FloatWidthChange(const TensorComparison& cmp) {
  const std::optional<DType> source = DescribedDType(cmp.source_desc);
  const std::optional<DType> target = DescribedDType(cmp.target_desc);
  return source && target && *source != *target && IsFloating(*source) && IsFloating(*target);
}

using internal::FormatPercent;

enum class Outcome { kPass, kFail, kIndeterminate };

constexpr char kRerun[] = "re-run `convgate compare` with this policy to decide";

int Side(double value, double threshold) { return (value > threshold) - (value < threshold); }

// `value` with the fewest significant digits (at least 3) that still read back on its side of
// `threshold`, so a sentence never says "1 < min 0.9999999" or "0.999 < min 0.999".
std::string Against(double value, double threshold) {
  for (int precision = 3; precision < 17; ++precision) {
    std::string text = FormatSignificant(value, precision);
    if (std::isnan(value) ||
        Side(std::strtod(text.c_str(), nullptr), threshold) == Side(value, threshold)) {
      return text;
    }
  }
  return FormatSignificant(value, 17);
}

std::string Against(Bracket<double> value, double threshold) {
  if (value.exact()) return Against(value.lo, threshold);
  std::string lo = Against(value.lo, threshold);
  std::string hi = Against(value.hi, threshold);
  // More digits until the two ends read differently ("[0.0667, 0.0667]" says nothing).
  for (int precision = 4; lo == hi && precision < 17; ++precision) {
    lo = FormatSignificant(value.lo, precision);
    hi = FormatSignificant(value.hi, precision);
  }
  return "in [" + lo + ", " + hi + "]";
}

// "1250", "10000", "1.25": whole ppm from 100 up, 3 significant digits below.
std::string Ppm(int64_t count, int64_t total) {
  const double ppm = static_cast<double>(count) * 1e6 / static_cast<double>(total);
  if (ppm < 100.0) return FormatSignificant(ppm, 3);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.0f", ppm);
  return buffer;
}

// "12 of 1000 elements (1.2%)", or "between 10 and 14 of 1000 elements (1% to 1.4%)".
std::string CountOf(Bracket<int64_t> count, int64_t total) {
  if (count.exact()) {
    return std::to_string(count.lo) + " of " + std::to_string(total) + " elements (" +
           FormatPercent(count.lo, total) + "%)";
  }
  return "between " + std::to_string(count.lo) + " and " + std::to_string(count.hi) + " of " +
         std::to_string(total) + " elements (" + FormatPercent(count.lo, total) + "% to " +
         FormatPercent(count.hi, total) + "%)";
}

std::string PpmOf(Bracket<int64_t> count, int64_t total) {
  if (count.exact()) return Ppm(count.lo, total) + " ppm";
  return Ppm(count.lo, total) + " to " + Ppm(count.hi, total) + " ppm";
}

// value <= threshold passes; NaN fails (Polygraphy counts a NaN error as a failure too).
Outcome AtMost(Bracket<double> value, double threshold) {
  if (std::isnan(value.lo) || std::isnan(value.hi)) return Outcome::kFail;
  if (value.hi <= threshold) return Outcome::kPass;
  if (value.lo > threshold) return Outcome::kFail;
  return Outcome::kIndeterminate;
}

// count / total * 1e6 <= ppm, multiplied out so no division rounds at the boundary.
Outcome WithinPpm(Bracket<int64_t> count, int64_t total, double ppm) {
  const double allowed = ppm * static_cast<double>(total);
  if (static_cast<double>(count.hi) * 1e6 <= allowed) return Outcome::kPass;
  if (static_cast<double>(count.lo) * 1e6 > allowed) return Outcome::kFail;
  return Outcome::kIndeterminate;
}

bool StartsWith(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

class Judging {
 public:
  Judging(const TensorComparison& cmp, const OutputPolicy& policy,
          const std::optional<ErrorStatValues>& exact_stat)
      : cmp_(cmp), policy_(policy), exact_stat_(exact_stat) {}

  Judgement Run() {
    result_.mismatches = {cmp_.mismatches, cmp_.mismatches};
    SplitComparisonFailures();
    if (cmp_.values_compared) {
      const bool by_stat = policy_.check_error_stat.kind != ErrorStatKind::kElementwise;
      if (cmp_.exact && by_stat) {
        result_.notes.push_back(
            "check_error_stat does not apply: integer, bool and string "
            "outputs compare exactly");
      }
      const bool by_values = cmp_.exact || !by_stat;
      if (!by_values) CountValueMismatches();
      JudgeMismatches(by_values);
      if (by_stat && !cmp_.exact) JudgeStat();
      JudgeFloors();
    }
    result_.passed = result_.failures.empty();
    return std::move(result_);
  }

 private:
  // Keeps the comparison's structural and introduced-non-finite sentences as failures; the
  // elementwise and inherited sentences are the policy's to judge. The prefixes are the ones
  // TensorComparison::failures documents.
  void SplitComparisonFailures() {
    for (const std::string& sentence : cmp_.failures) {
      if (StartsWith(sentence, "inherited non-finite:")) {
        inherited_sentence_ = sentence;
      } else if (StartsWith(sentence, "dtype mismatch:") && !policy_.strict_dtype &&
                 FloatWidthChange(cmp_)) {
        width_note_ = sentence.substr(std::string_view("dtype mismatch: ").size()) +
                      ": a floating-point width change, compared by value under the lower "
                      "precision's tolerance (--strict-dtype makes it a failure)";
      } else if (!cmp_.values_compared || StartsWith(sentence, "dtype mismatch:") ||
                 StartsWith(sentence, "shape mismatch:") ||
                 StartsWith(sentence, "introduced NaN:") ||
                 StartsWith(sentence, "introduced Inf:")) {
        result_.failures.push_back(sentence);
      } else {
        value_sentence_ = sentence;
      }
    }
    result_.notes = cmp_.notes;
    if (!width_note_.empty())
      result_.notes.insert(result_.notes.begin(), "dtype changed: " + width_note_);
  }

  template <typename T>
  Bracket<T> Use(Bracket<T> value) {
    if (!value.exact()) result_.exact = false;
    return value;
  }

  // Finite elements outside the policy's tolerance. Exact when the tolerance is the one the
  // comparison counted at (or cannot matter); otherwise recounted from the error summary.
  Bracket<int64_t> ValueMismatches() {
    const NonFiniteSplit& nf = cmp_.non_finite;
    const int64_t counted = cmp_.mismatches - nf.introduced_nan - nf.introduced_inf - nf.inherited;
    const Tolerance wanted = policy_.tolerance();
    if (cmp_.exact || wanted == cmp_.tolerance) return {counted, counted};
    recounted_ = true;
    const ErrorStats& errors = cmp_.errors;
    // |t - s| <= max|t - s| <= atol <= atol + rtol * |s| for every finite pair.
    if (errors.compared == 0 || wanted.atol >= errors.max_abs_error) return {0, 0};
    const bool looser = wanted.atol >= cmp_.tolerance.atol && wanted.rtol >= cmp_.tolerance.rtol;
    const bool tighter = wanted.atol <= cmp_.tolerance.atol && wanted.rtol <= cmp_.tolerance.rtol;
    if (looser && counted == 0) return {0, 0};
    Bracket<int64_t> count{0, errors.compared};  // a report without a summary
    if (cmp_.summary.Covers(errors.compared)) {
      count = cmp_.summary.CountOutside(wanted.atol, wanted.rtol);
    }
    // The count is monotone in the tolerance: a looser one rejects no pair the original accepted.
    if (looser) count.hi = std::min(count.hi, counted);
    if (tighter) count.lo = std::max(count.lo, counted);
    return Use(count);
  }

  std::string ValueSentence(Bracket<int64_t> values) const {
    if (!recounted_) return value_sentence_;
    std::string text = CountOf(values, cmp_.num_elements) + " outside atol " +
                       FormatShortest(policy_.atol) + " + rtol " + FormatShortest(policy_.rtol) +
                       " * |source| (recounted from the report's error summary)";
    const ElementReport& largest = cmp_.errors.max_abs;
    if (largest.flat >= 0) {
      text += "; the largest |diff| is " + FormatSignificant(largest.abs_error, 3) + " at " +
              FormatIndex(largest.index) + " (source " + FormatSignificant(largest.source, 6) +
              ", target " + FormatSignificant(largest.target, 6) + ")";
    }
    return text;
  }

  // Under a statistic the elementwise count decides nothing, but the report still shows it: the
  // elements outside the policy's atol and rtol, a bracket that does not change the verdict basis.
  void CountValueMismatches() {
    const bool exact = result_.exact;
    const Bracket<int64_t> values = ValueMismatches();
    result_.exact = exact;
    const NonFiniteSplit& nf = cmp_.non_finite;
    const int64_t non_finite = nf.inherited + nf.introduced_nan + nf.introduced_inf;
    result_.mismatches = {values.lo + non_finite, values.hi + non_finite};
  }

  // Elements outside the tolerance (finite ones when include_values, and inherited non-finite
  // ones) held to mismatch_ppm.
  void JudgeMismatches(bool include_values) {
    const Bracket<int64_t> values = include_values ? ValueMismatches() : Bracket<int64_t>{0, 0};
    const int64_t inherited = cmp_.non_finite.inherited;
    const Bracket<int64_t> total{values.lo + inherited, values.hi + inherited};
    if (include_values) {
      const int64_t introduced = cmp_.non_finite.introduced_nan + cmp_.non_finite.introduced_inf;
      result_.mismatches = {total.lo + introduced, total.hi + introduced};
    }
    if (total.hi == 0) return;
    std::vector<std::string> details;
    if (values.hi > 0) details.push_back(ValueSentence(values));
    if (inherited > 0) details.push_back(inherited_sentence_);
    const int64_t n = cmp_.num_elements;
    const std::string allowed = FormatShortest(policy_.mismatch_ppm) + " ppm";
    std::vector<std::string>* out = &result_.failures;
    switch (WithinPpm(total, n, policy_.mismatch_ppm)) {
      case Outcome::kPass:
        out = &result_.notes;
        out->push_back(CountOf(total, n) + " (" + PpmOf(total, n) +
                       ") outside tolerance, within the allowed " + allowed + " (mismatch_ppm)");
        break;
      case Outcome::kFail:
        if (policy_.mismatch_ppm > 0.0) {
          out->push_back(PpmOf(total, n) + " of elements outside tolerance > allowed " + allowed);
        }
        break;
      case Outcome::kIndeterminate:
        Indeterminate();
        out->push_back("indeterminate: " + CountOf(total, n) + " (" + PpmOf(total, n) +
                       ") outside tolerance against the allowed " + allowed +
                       "; the report's error summary cannot decide: " + kRerun);
        break;
    }
    out->insert(out->end(), details.begin(), details.end());
  }

  void Indeterminate() { result_.indeterminate = true; }

  // The policy's statistic of the absolute or relative error over finite pairs.
  Bracket<double> StatValue(bool relative) {
    const ErrorStats& errors = cmp_.errors;
    const ErrorStat& stat = policy_.check_error_stat;
    const double max = relative ? errors.max_rel_error : errors.max_abs_error;
    if (stat.kind == ErrorStatKind::kMean) {
      const double mean = relative ? errors.mean_rel_error : errors.mean_abs_error;
      return {mean, mean};
    }
    const double q = stat.Quantile();
    if (q == 100.0) return {max, max};
    if (exact_stat_.has_value()) {
      const double value = relative ? exact_stat_->rel_error : exact_stat_->abs_error;
      return {value, value};
    }
    for (size_t idx = 0; idx < std::size(kPercentiles) && !relative; ++idx) {
      if (kPercentiles[idx] == q)
        return {errors.abs_error_percentiles[idx], errors.abs_error_percentiles[idx]};
    }
    if (!cmp_.summary.Covers(errors.compared)) return Use(Bracket<double>{0.0, max});
    const Bracket<double> value = cmp_.summary.Percentile(q, relative);
    return Use(Bracket<double>{value.lo, std::min(value.hi, max)});
  }

  // Polygraphy's rule: S(|diff|) <= atol OR S(rel) <= rtol.
  void JudgeStat() {
    const std::string name = ErrorStatName(policy_.check_error_stat);
    if (cmp_.errors.compared == 0) {
      result_.notes.push_back("no finite element pairs: the " + name + " error is not judged");
      return;
    }
    const std::string flag = " (--check-error-stat " + name + ")";
    const Bracket<double> abs = StatValue(false);
    const Outcome abs_outcome = AtMost(abs, policy_.atol);
    const std::string abs_text = name + " |diff| " + Against(abs, policy_.atol);
    if (abs_outcome == Outcome::kPass) {  // the OR is decided: the relative error is not needed
      result_.notes.push_back("judged by " + name + flag + ": " + abs_text + " <= atol " +
                              FormatShortest(policy_.atol));
      return;
    }
    const Bracket<double> rel = StatValue(true);
    const Outcome rel_outcome = AtMost(rel, policy_.rtol);
    const std::string rel_text = name + " rel " + Against(rel, policy_.rtol);
    if (rel_outcome == Outcome::kPass) {
      result_.notes.push_back("judged by " + name + flag + ": " + rel_text + " <= rtol " +
                              FormatShortest(policy_.rtol));
    } else if (abs_outcome == Outcome::kFail && rel_outcome == Outcome::kFail) {
      result_.failures.push_back(abs_text + " > atol " + FormatShortest(policy_.atol) + " and " +
                                 rel_text + " > rtol " + FormatShortest(policy_.rtol) + flag);
    } else {
      Indeterminate();
      result_.failures.push_back("indeterminate: " + abs_text + " against atol " +
                                 FormatShortest(policy_.atol) + " and " + rel_text +
                                 " against rtol " + FormatShortest(policy_.rtol) + flag +
                                 "; the report's error summary cannot decide: " + kRerun);
    }
  }

  // Cosine and SNR measure the error against the source's energy. A source within the absolute
  // tolerance's reach of zero has none to measure against: a detector's map of ~4e-6 on noise,
  // rounded to exactly 0 by float16, reads cosine 0 and SNR 0 dB while every element is within
  // atol. Such floors are undefined, never failures.
  bool FloorsUndefined() {
    if (cmp_.exact || cmp_.errors.compared == 0) return false;
    const double peak = cmp_.metrics.peak;
    if (!(peak <= policy_.atol)) return false;
    result_.floors_undefined = "cosine and SNR undefined: max |source| " +
                               FormatSignificant(peak, 2) + " <= atol " +
                               FormatShortest(policy_.atol);
    return true;
  }

  // The largest error as a multiple of the measured noise floor, for the report and the table.
  void MeasureAgainstFloor() {
    if (!policy_.noise_floor || !(*policy_.noise_floor > 0.0) || cmp_.exact) return;
    if (cmp_.errors.compared == 0) return;
    result_.floor_multiple = cmp_.errors.max_abs_error / *policy_.noise_floor;
    result_.notes.push_back("max |diff| " + FormatSignificant(cmp_.errors.max_abs_error, 3) +
                            " is " + FormatSignificant(*result_.floor_multiple, 3) +
                            "x the noise floor " + FormatSignificant(*policy_.noise_floor, 2));
  }

  // min_cosine and min_snr_db, on top of the tolerance rules.
  void JudgeFloors() {
    MeasureAgainstFloor();
    const bool undefined = FloorsUndefined();
    if (!policy_.min_cosine.has_value() && !policy_.min_snr_db.has_value()) return;
    if (undefined) {
      result_.notes.push_back(result_.floors_undefined + ": min_cosine and min_snr_db not judged");
      return;
    }
    if (cmp_.exact || cmp_.errors.compared == 0) {
      result_.notes.push_back(std::string("min_cosine and min_snr_db not judged: ") +
                              (cmp_.exact ? "integer, bool and string outputs compare exactly"
                                          : "no finite element pairs"));
      return;
    }
    const Metrics& metrics = cmp_.metrics;
    if (policy_.min_cosine && !(metrics.cosine >= *policy_.min_cosine)) {
      result_.failures.push_back("cosine " + Against(metrics.cosine, *policy_.min_cosine) +
                                 " < min " + FormatShortest(*policy_.min_cosine));
    }
    if (policy_.min_snr_db && !(metrics.snr_db >= *policy_.min_snr_db)) {
      result_.failures.push_back("SNR " + Against(metrics.snr_db, *policy_.min_snr_db) +
                                 " dB < min " + FormatShortest(*policy_.min_snr_db) + " dB");
    }
  }

  const TensorComparison& cmp_;
  const OutputPolicy& policy_;
  const std::optional<ErrorStatValues>& exact_stat_;
  Judgement result_;
  std::string value_sentence_;
  std::string inherited_sentence_;
  std::string width_note_;  // a floating-point width change, noted rather than failed
  bool recounted_ = false;
};

}  // namespace

TolerancesToPass TolerancesToPassUnder(const TensorComparison& comparison,
                                       const Tolerance& tolerance) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const Frontier& frontier = comparison.summary.frontier;
  if (frontier.depth() > 0) {
    return {*frontier.AtolToPass(tolerance.rtol), *frontier.RtolToPass(tolerance.atol)};
  }
  if (tolerance == comparison.tolerance) {
    return {comparison.atol_to_pass, comparison.rtol_to_pass};
  }
  // |t - s| - rtol * |s| <= max|t - s| for every pair; nothing bounds the rtol needed.
  return {comparison.errors.max_abs_error, kInf};
}

Judgement Judge(const TensorComparison& comparison, const OutputPolicy& policy,
                const std::optional<ErrorStatValues>& exact_stat) {
  return Judging(comparison, policy, exact_stat).Run();
}

}  // namespace convgate::compare
