// `convgate history [PATTERN]`: what the results store says: the latest verdict of each entry and
// conversion, and --regressions: entries that passed in an earlier run and do not in their latest,
// and benchmarked entries whose latest median latency grew beyond the noise.
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/command.h"
#include "cli/history_trend.h"
#include "convgate/batch/batch.h"
#include "convgate/core/numbers.h"
#include "convgate/core/text_table.h"
#include "convgate/core/units.h"
#include "convgate/report/json_text.h"
#include "convgate/store/location.h"
#include "convgate/store/store.h"

namespace convgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kHistoryExitCodes[] =
    "Exit codes: 0 done (no regression with --regressions); 1 --regressions found one; 2 usage "
    "error; 3 the store cannot be opened or read (missing, locked, newer schema); 4 internal "
    "error.";

// A regression: the latest job of a series is not a pass, an earlier run's was. A series is one
// entry's conversion, like with like (store::SameConversion): the same model, conversion and
// parameters, and the same converter version where both jobs know it. A variant of the entry with
// other --param values is another series, and a converter upgrade starts a new one; a given
// target under a new file name does not.
struct Regression {
  store::HistoryRow latest;
  store::HistoryRow last_pass;
};

std::vector<Regression> FindRegressions(const std::vector<store::HistoryRow>& jobs) {
  // By series (store::SeriesKey), oldest first.
  std::map<std::vector<std::string>, std::vector<const store::HistoryRow*>> by_series;
  for (const store::HistoryRow& row : jobs) by_series[store::SeriesKey(row.job)].push_back(&row);
  std::vector<Regression> regressions;
  for (const auto& [key, rows] : by_series) {
    const store::HistoryRow& latest = *rows.back();
    if (latest.job.verdict == Verdict::kPass) continue;
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
      if ((*it)->run_id < latest.run_id && (*it)->job.verdict == Verdict::kPass &&
          store::SameConversion((*it)->job, latest.job)) {
        regressions.push_back({latest, **it});
        break;
      }
    }
  }
  return regressions;
}

// A latency regression: the latest benchmarked job of a series runs slower than the one before it
// (the same conversion, like with like) by more than kLatencyMargin, beyond both runs' noise: the
// median's 95% intervals do not overlap.
constexpr double kLatencyMargin = 0.05;

struct LatencyRegression {
  store::HistoryRow latest;
  store::HistoryRow before;
};

bool Benchmarked(const store::JobRecord& job) { return job.p50_ms > 0; }

std::vector<LatencyRegression> FindLatencyRegressions(const std::vector<store::HistoryRow>& jobs) {
  std::map<std::vector<std::string>, std::vector<const store::HistoryRow*>> by_series;
  for (const store::HistoryRow& row : jobs) {
    if (Benchmarked(row.job)) by_series[store::SeriesKey(row.job)].push_back(&row);
  }
  std::vector<LatencyRegression> regressions;
  for (const auto& [key, rows] : by_series) {
    const store::HistoryRow& latest = *rows.back();
    for (auto it = rows.rbegin() + 1; it < rows.rend(); ++it) {
      const store::JobRecord& before = (*it)->job;
      if ((*it)->run_id >= latest.run_id || !store::SameConversion(before, latest.job)) continue;
      const bool slower = latest.job.p50_ms > before.p50_ms * (1.0 + kLatencyMargin);
      const bool beyond_noise = latest.job.p50_low_ms > before.p50_high_ms;
      if (slower && beyond_noise) regressions.push_back({latest, **it});
      break;
    }
  }
  return regressions;
}

std::string LatencyText(const store::JobRecord& job) {
  return FormatSignificant(job.p50_ms, 3) + " ms (" + FormatSignificant(job.p50_low_ms, 3) + "-" +
         FormatSignificant(job.p50_high_ms, 3) + ")";
}

// max|diff| over the job's outputs: "nan" when a target introduced NaN or Inf (|t - s| is not a
// number there, whatever the finite pairs' largest error), "-" when unknown or without a finite
// pair.
std::string MaxDiffCell(const store::HistoryRow& row) {
  if (row.introduced_non_finite.value_or(0) > 0) return "nan";
  if (!row.max_abs_error) return "-";
  char diff[32];
  std::snprintf(diff, sizeof(diff), "%.3g", *row.max_abs_error);
  return diff;
}

std::string Table(const std::vector<const store::HistoryRow*>& rows) {
  TextTable table(
      {"entry", "conversion", "verdict", "max|diff|", "non-finite", "run", "finished", "error"});
  for (const store::HistoryRow* row : rows) {
    const std::string conversion = store::ConversionLabel(row->job);
    std::string error = row->job.error_category;
    const std::string first = row->job.error_text.substr(0, row->job.error_text.find('\n'));
    if (!first.empty()) error += (error.empty() ? "" : ": ") + first;
    if (error.size() > 80) error = error.substr(0, 77) + "...";
    table.AddRow({row->job.entry_id, conversion.empty() ? "-" : conversion,
                  std::string(VerdictName(row->job.verdict)), MaxDiffCell(*row),
                  row->non_finite ? std::to_string(*row->non_finite) : "-",
                  std::to_string(row->run_id), row->job.finished_at, error});
  }
  return table.Render();
}

class HistoryCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "history",
        "The latest verdict per entry and conversion in a results store, or --regressions");
    app->add_option("PATTERN", query_.pattern,
                    "Only entries whose id or model id matches this glob ('tiny*', 'bert-base')");
    app->footer(kHistoryExitCodes);
    if (const char* env = std::getenv("CONVGATE_STORE"); env != nullptr && *env != '\0') {
      store_ = env;
    }
    Flag store = TextFlag("--store", "PATH|URL",
                          "The results store: an SQLite file, or a PostgreSQL database "
                          "(postgresql://USER@HOST/DB; the password from PGPASSWORD or ~/.pgpass)",
                          {"results/convgate.db", "postgresql://ci@db.example/convgate"}, store_);
    store.default_text = "$CONVGATE_STORE, else convgate-batch/convgate.db (batch's default)";
    flags_.Add({
        std::move(store),
        Flag{.name = "--since",
             .value_name = "DATE|AGE",
             .help = "Only jobs finished at or after DATE (UTC), or within AGE of now",
             .examples = {"2026-11-01", "2026-11-26T17:00:00Z", "7d", "12h"},
             .apply = [this](const std::string& value) -> Status {
               CONVGATE_ASSIGN_OR_RETURN(query_.since, SinceTime(value));
               return Status::OK();
             }},
        SwitchFlag("--regressions",
                   "Entries that passed in an earlier run and do not in their latest, and "
                   "benchmarked ones whose median latency grew by more than 5% beyond both runs' "
                   "95% intervals (exit 1 when there are any)",
                   regressions_),
        SwitchFlag("--json", "JSON instead of the table", json_),
        Flag{
            .name = "--trend",
            .value_name = "FIGURE",
            .help =
                "Every job of each matching entry and conversion, oldest first, with FIGURE "
                "and its change from the job before: max_abs_error, mean_abs_error, "
                "mismatches, cosine, snr_db (snr), non_finite, seconds. Shown without the flag too "
                "(max_abs_error, after the table) when PATTERN selects one entry",
            .default_text = "max_abs_error",
            .examples = {"cosine", "snr"},
            .apply = [this](const std::string& value) -> Status {
              CONVGATE_ASSIGN_OR_RETURN(trend_, TrendFigureName(value));
              return Status::OK();
            }},
    });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    std::error_code ec;
    // A missing SQLite file is named here rather than created empty; a database URL is for the
    // server to answer.
    if (store::StoreBackendOf(store_) == store::StoreBackend::kSqlite && !fs::exists(store_, ec)) {
      return ReportError(gate::Stage::kLoad,
                         Status::NotFound("no results store at " + store_ +
                                          " (convgate batch writes OUT/convgate.db)"));
    }
    Result<std::unique_ptr<store::Store>> store = store::Store::Open({store_});
    if (!store.ok()) return ReportError(gate::Stage::kLoad, store.status());
    if (regressions_) return Regressions(**store);
    if (!trend_.empty()) return Trends(**store, trend_, true);
    return Latest(**store);
  }

 private:
  ExitCode Latest(store::Store& store) const {
    Result<std::vector<store::HistoryRow>> rows = store.Latest(query_);
    if (!rows.ok()) return ReportError(gate::Stage::kLoad, rows.status());
    if (json_) {
      nlohmann::json list = nlohmann::json::array();
      for (const store::HistoryRow& row : *rows) list.push_back(HistoryRowJson(row));
      std::cout << report::DumpJson(list, 2) << "\n";
      return ExitCode::kPassed;
    }
    std::vector<const store::HistoryRow*> pointers;
    for (const store::HistoryRow& row : *rows) pointers.push_back(&row);
    std::cout << ForTerminal(Table(pointers));
    // One entry selected: its history is what the user is after.
    if (!query_.pattern.empty() && rows->size() == 1) {
      std::cout << "\n";
      return Trends(store, "max_abs_error", false);
    }
    return ExitCode::kPassed;
  }

  ExitCode Trends(store::Store& store, const std::string& figure, bool asked) const {
    Result<std::vector<store::HistoryRow>> jobs = store.Jobs(query_);
    if (!jobs.ok()) return ReportError(gate::Stage::kLoad, jobs.status());
    const std::vector<TrendRow> rows = Trend(*jobs, figure);
    if (json_ && asked) {
      std::cout << report::DumpJson(TrendJson(rows, figure), 2) << "\n";
    } else {
      std::cout << ForTerminal(TrendTable(rows, figure));
    }
    return ExitCode::kPassed;
  }

  ExitCode Regressions(store::Store& store) const {
    // Entries whose latest job passes have no regression; the others' verdicts come without
    // figures (fast over 100,000 jobs), and the latest jobs' figures from the latest query.
    store::HistoryQuery query = query_;
    query.failing_latest_only = true;
    query.with_figures = false;
    Result<std::vector<store::HistoryRow>> jobs = store.Jobs(query);
    if (!jobs.ok()) return ReportError(gate::Stage::kLoad, jobs.status());
    std::vector<Regression> regressions = FindRegressions(*jobs);
    // Latency: every benchmarked job's figures are its own columns, so verdicts-only rows do.
    store::HistoryQuery all = query_;
    all.with_figures = false;
    Result<std::vector<store::HistoryRow>> every = store.Jobs(all);
    if (!every.ok()) return ReportError(gate::Stage::kLoad, every.status());
    const std::vector<LatencyRegression> slower = FindLatencyRegressions(*every);
    if (!regressions.empty()) {
      Result<std::vector<store::HistoryRow>> latest = store.Latest(query_);
      if (!latest.ok()) return ReportError(gate::Stage::kLoad, latest.status());
      std::map<int64_t, const store::HistoryRow*> by_job;
      for (const store::HistoryRow& row : *latest) by_job[row.job_id] = &row;
      for (Regression& regression : regressions) {
        auto it = by_job.find(regression.latest.job_id);
        if (it != by_job.end()) regression.latest = *it->second;
      }
    }
    if (json_) {
      nlohmann::json list = nlohmann::json::array();
      for (const Regression& regression : regressions) {
        nlohmann::json item = HistoryRowJson(regression.latest);
        item["last_pass"] = HistoryRowJson(regression.last_pass);
        list.push_back(item);
      }
      for (const LatencyRegression& regression : slower) {
        nlohmann::json item = HistoryRowJson(regression.latest);
        item["regression"] = "latency";
        item["before"] = HistoryRowJson(regression.before);
        list.push_back(item);
      }
      std::cout << report::DumpJson(list, 2) << "\n";
    } else if (regressions.empty() && slower.empty()) {
      std::cout << "no regressions\n";
    } else {
      std::vector<const store::HistoryRow*> latest;
      for (const Regression& regression : regressions) latest.push_back(&regression.latest);
      if (!latest.empty()) std::cout << ForTerminal(Table(latest));
      for (const Regression& regression : regressions) {
        std::cout << ForTerminal("REGRESSION " + regression.latest.job.entry_id +
                                 ": passed in run " + std::to_string(regression.last_pass.run_id) +
                                 " (" + regression.last_pass.job.finished_at + "), " +
                                 std::string(VerdictName(regression.latest.job.verdict)) +
                                 " in run " + std::to_string(regression.latest.run_id))
                  << "\n";
      }
      for (const LatencyRegression& regression : slower) {
        const store::JobRecord& now = regression.latest.job;
        const store::JobRecord& was = regression.before.job;
        const std::string conversion = store::ConversionLabel(now);
        std::cout << ForTerminal("LATENCY REGRESSION " + now.entry_id +
                                 (conversion.empty() ? "" : " (" + conversion + ")") + ": p50 " +
                                 LatencyText(now) + " in run " +
                                 std::to_string(regression.latest.run_id) + ", was " +
                                 LatencyText(was) + " in run " +
                                 std::to_string(regression.before.run_id) + ": " +
                                 FormatSignificant(now.p50_ms / was.p50_ms, 3) +
                                 "x slower, beyond both runs' 95% intervals")
                  << "\n";
      }
    }
    return regressions.empty() && slower.empty() ? ExitCode::kPassed : ExitCode::kFailed;
  }

  std::string store_ = "convgate-batch/convgate.db";
  store::HistoryQuery query_;
  bool regressions_ = false;
  bool json_ = false;
  std::string trend_;  // "" unless --trend
};

}  // namespace

std::unique_ptr<Command> MakeHistoryCommand() { return std::make_unique<HistoryCommand>(); }

}  // namespace convgate::cli
