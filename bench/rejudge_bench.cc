// How often `convgate check` decides what a fresh `convgate compare` decides: for each pair of
// saved outputs, one compare report is written and read back as `check` reads it, then every
// policy of a grid is judged twice, by a fresh compare of the same outputs and by re-judging the
// saved report. Each output check counts as decided and agreeing, indeterminate, or disagreeing
// (which must never happen: `check` only decides what its summary proves).
//
//   convgate-rejudge-bench LABEL=SOURCE.npz,TARGET.npz ...
//
// Two grids (docs/guide.md, "convgate check"):
//   round: atol 0 and {1, 2, 5} x 1e-8 .. 1, rtol 0 and {1, 5} x 1e-6 .. 1e-1, each with
//          elementwise at mismatch_ppm 0, 100, 1000, 10000, 100000 and the statistics max, mean,
//          median, p90, p95, p99, p99.9 (what a user types);
//   near:  per output, tolerances placed on the values its report shows (max|diff|, the stored
//          percentiles, max and mean rel, and the tolerances its hints would suggest) times 0.5,
//          0.8, 0.95, 1.05, 1.25 and 2, and those values rounded up to 1 and 2 digits (what a
//          user reading the report types; the hardest case for a summary).
// Also prints report.json bytes per output check (compact).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "convgate/compare/judge.h"
#include "convgate/compare/policy.h"
#include "convgate/gate/rejudge.h"
#include "convgate/gate/workflows.h"
#include "convgate/report/json_text.h"
#include "convgate/report/read_report.h"
#include "convgate/report/report.h"

namespace {

using convgate::compare::ErrorStat;
using convgate::compare::ParseErrorStat;
using convgate::compare::Policy;

struct PolicyCase {
  std::string grid;
  std::string label;
  Policy policy;
};

Policy MakePolicy(const std::string& stat, double atol, double rtol, double ppm) {
  Policy policy;
  policy.global.atol = atol;
  policy.global.rtol = rtol;
  policy.global.check_error_stat = ParseErrorStat(stat).value();
  policy.global.mismatch_ppm = ppm;
  return policy;
}

std::string Label(const std::string& stat, double atol, double rtol, double ppm) {
  char buffer[128];
  std::snprintf(buffer, sizeof(buffer), "%s atol %.6g rtol %.6g ppm %g", stat.c_str(), atol, rtol,
                ppm);
  return buffer;
}

void AddCase(std::vector<PolicyCase>& cases, const std::string& grid, const std::string& stat,
             double atol, double rtol, double ppm) {
  if (!(atol >= 0.0) || !(rtol >= 0.0) || !std::isfinite(atol) || !std::isfinite(rtol)) return;
  cases.push_back({grid, Label(stat, atol, rtol, ppm), MakePolicy(stat, atol, rtol, ppm)});
}

const std::vector<std::string> kStats = {"max", "mean", "median", "p90", "p95", "p99", "p99.9"};

std::vector<PolicyCase> RoundGrid() {
  std::vector<double> atols = {0.0};
  std::vector<double> rtols = {0.0};
  for (int exponent = -8; exponent <= 0; ++exponent) {
    for (double mantissa : {1.0, 2.0, 5.0}) atols.push_back(mantissa * std::pow(10.0, exponent));
  }
  for (int exponent = -6; exponent <= -1; ++exponent) {
    for (double mantissa : {1.0, 5.0}) rtols.push_back(mantissa * std::pow(10.0, exponent));
  }
  std::vector<PolicyCase> cases;
  for (double atol : atols) {
    for (double rtol : rtols) {
      for (double ppm : {0.0, 100.0, 1000.0, 10000.0, 100000.0}) {
        AddCase(cases, "round", "elementwise", atol, rtol, ppm);
      }
      for (const std::string& stat : kStats) AddCase(cases, "round", stat, atol, rtol, 0.0);
    }
  }
  return cases;
}

double RoundUp(double value, int digits) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const double unit = std::pow(10.0, std::floor(std::log10(value)) - (digits - 1));
  return std::ceil(value / unit) * unit;
}

std::vector<double> Near(double value) {
  std::vector<double> out;
  for (double factor : {0.5, 0.8, 0.95, 1.05, 1.25, 2.0}) out.push_back(value * factor);
  out.push_back(RoundUp(value, 1));
  out.push_back(RoundUp(value, 2));
  return out;
}

// Tolerances on the values sample 0's report shows for each output.
std::vector<PolicyCase> NearGrid(const convgate::gate::CompareReport& report) {
  std::vector<PolicyCase> cases;
  std::map<std::string, bool> seen;
  for (const convgate::gate::OutputCheck& check : report.checks) {
    if (!check.comparison || seen[check.output] || check.comparison->exact) continue;
    seen[check.output] = true;
    const convgate::compare::TensorComparison& cmp = *check.comparison;
    const convgate::compare::ErrorStats& errors = cmp.errors;
    if (errors.compared == 0) continue;
    // Elementwise: atol on max|diff| and on the hint's suggestions under several rtols, rtol on
    // the hint's rtol; each at ppm 0 and 1000.
    for (double ppm : {0.0, 1000.0}) {
      for (double rtol : {0.0, 1e-4, 1e-3, 1e-2}) {
        const convgate::compare::Tolerance tolerance{1e-5, rtol};
        const double atol = convgate::compare::TolerancesToPassUnder(cmp, tolerance).atol;
        for (double value : Near(atol)) AddCase(cases, "near", "elementwise", value, rtol, ppm);
      }
      for (double atol : {0.0, 1e-5, 1e-4}) {
        const convgate::compare::Tolerance tolerance{atol, 1e-3};
        const double rtol = convgate::compare::TolerancesToPassUnder(cmp, tolerance).rtol;
        for (double value : Near(rtol)) AddCase(cases, "near", "elementwise", atol, value, ppm);
      }
      for (double value : Near(errors.max_abs_error)) {
        AddCase(cases, "near", "elementwise", value, 0.0, ppm);
      }
    }
    // Statistics: atol on the stored |diff| figures, rtol on the relative ones shown.
    const char* stored[] = {"median", "p75", "p90", "p99", "p99.5"};
    for (size_t idx = 0; idx < std::size(stored); ++idx) {
      for (double value : Near(errors.abs_error_percentiles[idx])) {
        AddCase(cases, "near", stored[idx], value, 0.0, 0.0);
      }
    }
    for (const std::string& stat : kStats) {
      for (double value : Near(errors.max_rel_error)) AddCase(cases, "near", stat, 0.0, value, 0);
      for (double value : Near(errors.mean_rel_error)) AddCase(cases, "near", stat, 0.0, value, 0);
      for (double value : Near(errors.max_abs_error)) AddCase(cases, "near", stat, value, 0.0, 0);
      for (double value : Near(errors.mean_abs_error)) AddCase(cases, "near", stat, value, 0.0, 0);
    }
  }
  return cases;
}

struct Tally {
  int64_t agree = 0;
  int64_t indeterminate = 0;
  int64_t disagree = 0;
  int64_t total() const { return agree + indeterminate + disagree; }
};

void Print(const std::string& what, const Tally& tally) {
  std::printf(
      "%-40s %8lld checks: %8lld decided and agreeing (%.2f%%), %6lld indeterminate, %lld "
      "disagreeing\n",
      what.c_str(), static_cast<long long>(tally.total()), static_cast<long long>(tally.agree),
      tally.total() > 0
          ? 100.0 * static_cast<double>(tally.agree) / static_cast<double>(tally.total())
          : 0.0,
      static_cast<long long>(tally.indeterminate), static_cast<long long>(tally.disagree));
}

convgate::gate::CompareReport Compare(const std::string& source, const std::string& target,
                                      const Policy& policy) {
  convgate::gate::CompareOptions options;
  options.source = source;
  options.target = target;
  options.policy = policy;
  return convgate::gate::CompareModelsGate(options);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LABEL=SOURCE.npz,TARGET.npz ...\n", argv[0]);
    return 2;
  }
  const std::vector<PolicyCase> round = RoundGrid();
  std::map<std::string, Tally> by_grid;
  std::map<std::string, Tally> by_kind;
  int64_t report_bytes = 0;
  int64_t report_checks = 0;
  for (int arg = 1; arg < argc; ++arg) {
    const std::string spec = argv[arg];
    const size_t equals = spec.find('=');
    const size_t comma = spec.find(',');
    if (equals == std::string::npos || comma == std::string::npos) {
      std::fprintf(stderr, "bad pair '%s' (LABEL=SOURCE.npz,TARGET.npz)\n", spec.c_str());
      return 2;
    }
    const std::string label = spec.substr(0, equals);
    const std::string source = spec.substr(equals + 1, comma - equals - 1);
    const std::string target = spec.substr(comma + 1);
    const convgate::gate::CompareReport saved = Compare(source, target, Policy());
    if (saved.error) {
      std::fprintf(stderr, "%s: %s\n", label.c_str(), saved.error->status.message().c_str());
      return 3;
    }
    convgate::report::Invocation invocation;
    invocation.command = "compare";
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("convgate_rejudge_bench_" + label + ".json");
    const std::string text =
        convgate::report::DumpJson(convgate::report::ReportJson(saved, invocation));
    std::ofstream(path) << text;
    report_bytes += static_cast<int64_t>(text.size());
    report_checks += static_cast<int64_t>(saved.checks.size());
    auto read = convgate::report::ReadCompareReport(path);
    if (!read.ok()) {
      std::fprintf(stderr, "%s: %s\n", label.c_str(), read.status().message().c_str());
      return 3;
    }
    std::vector<PolicyCase> cases = round;
    for (PolicyCase& near : NearGrid(saved)) cases.push_back(std::move(near));
    Tally pair_tally;
    for (const PolicyCase& c : cases) {
      const convgate::gate::CompareReport fresh = Compare(source, target, c.policy);
      const convgate::gate::CompareReport rejudged =
          convgate::gate::RejudgeCompareReport(*read, c.policy, path.string());
      for (size_t idx = 0; idx < fresh.checks.size(); ++idx) {
        const bool expected = fresh.checks[idx].passed;
        const convgate::gate::OutputCheck& got = rejudged.checks[idx];
        Tally& grid = by_grid[c.grid];
        Tally& kind = by_kind[c.grid + " " +
                              convgate::compare::ErrorStatName(*c.policy.global.check_error_stat)];
        for (Tally* tally : {&grid, &kind, &pair_tally}) {
          if (got.indeterminate) {
            ++tally->indeterminate;
          } else if (got.passed == expected) {
            ++tally->agree;
          } else {
            ++tally->disagree;
          }
        }
        if (!got.indeterminate && got.passed != expected) {
          std::printf("DISAGREE %s sample %d output %s: %s (fresh %s)\n", label.c_str(), got.sample,
                      got.output.c_str(), c.label.c_str(), expected ? "pass" : "fail");
        }
      }
    }
    Print(label, pair_tally);
    std::filesystem::remove(path);
  }
  std::printf("\n");
  for (const auto& [name, tally] : by_kind) Print("  " + name, tally);
  std::printf("\n");
  Tally all;
  for (const auto& [name, tally] : by_grid) {
    Print("grid " + name, tally);
    all.agree += tally.agree;
    all.indeterminate += tally.indeterminate;
    all.disagree += tally.disagree;
  }
  Print("all", all);
  std::printf(
      "report.json: %lld bytes for %lld output checks (%.0f bytes per check, %.0f KB per "
      "100 checks)\n",
      static_cast<long long>(report_bytes), static_cast<long long>(report_checks),
      static_cast<double>(report_bytes) / static_cast<double>(report_checks),
      static_cast<double>(report_bytes) / static_cast<double>(report_checks) * 100 / 1000);
  return all.disagree == 0 ? 0 : 1;
}
