// `convgate report RESULT...`: saved results rendered for people: an HTML page (--html), a
// Markdown summary (--markdown, or on stdout when neither is asked for), from result folders,
// report.json files and batch folders (summary.json), as the gate commands' own --html/--markdown.
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/check_batch.h"
#include "cli/command.h"
#include "cli/history_trend.h"
#include "convgate/core/file_util.h"
#include "convgate/report/html.h"
#include "convgate/store/location.h"
#include "convgate/store/store.h"

namespace convgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kReportExitCodes[] =
    "Exit codes: 0 rendered; 2 usage error; 3 a RESULT cannot be read (missing, not JSON, not a "
    "convgate result) or a file cannot be written; 4 internal error.";

// The JSON document a RESULT names: a folder's report.json (else its batch summary.json), or the
// file itself.
Result<nlohmann::json> ReadResult(const std::string& result) {
  fs::path path = result;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    if (fs::is_regular_file(path / "report.json", error)) {
      path /= "report.json";
    } else if (fs::is_regular_file(path / "summary.json", error)) {
      path /= "summary.json";
    } else {
      return Status::NotFound(result +
                              ": a folder without report.json or summary.json (a convgate --out "
                              "folder, or a batch's)");
    }
  }
  CONVGATE_ASSIGN_OR_RETURN(const std::string text, ReadFile(path, 1ll << 31));
  nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  if (!document.is_object() || !(document.contains("command") ||
                                 (document.contains("jobs") && document.contains("manifest")))) {
    return Status::DataLoss(path.string() +
                            ": not a convgate result (report.json with \"command\", or a batch "
                            "summary.json)");
  }
  return document;
}

// The jobs of a results store (those finished since `since`, ISO 8601, or all; of run `run` only
// when it is > 0) as one document: {"store": location (no password), "since": ..., "run": ...,
// "history": [history --json's rows]}. NotFound naming the run when it has no job.
Result<nlohmann::json> ReadStore(const std::string& location, const std::string& since, int run) {
  CONVGATE_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store, store::Store::Open({location}));
  store::HistoryQuery query;
  query.since = since;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<store::HistoryRow> rows, store->Jobs(query));
  nlohmann::json history = nlohmann::json::array();
  for (const store::HistoryRow& row : rows) {
    if (run <= 0 || row.run_id == run) history.push_back(HistoryRowJson(row));
  }
  if (run > 0 && history.empty()) {
    return Status::NotFound(store::RedactStoreLocation(location) + " has no job of run " +
                            std::to_string(run) + (since.empty() ? "" : " since " + since) +
                            " (`convgate history --store ...` lists the runs)");
  }
  nlohmann::json document = {{"store", store::RedactStoreLocation(location)},
                             {"since", since},
                             {"history", std::move(history)}};
  if (run > 0) document["run"] = run;
  return document;
}

// The <testsuite> elements of the junit.xml files a RESULT has: a result folder's (or the one
// beside a report.json), and every job's of a batch folder.
Status CollectSuites(const std::string& result, std::string& suites) {
  fs::path folder = result;
  std::error_code error;
  if (!fs::is_directory(folder, error))
    folder = folder.parent_path().empty() ? "." : folder.parent_path();
  std::vector<fs::path> files;
  if (fs::is_regular_file(folder / "junit.xml", error)) {
    files.push_back(folder / "junit.xml");
  } else if (fs::is_regular_file(folder / "summary.json", error)) {
    CONVGATE_ASSIGN_OR_RETURN(const std::string text,
                              ReadFile(folder / "summary.json", kMaxTextFileBytes));
    const nlohmann::json summary = nlohmann::json::parse(text, nullptr, false);
    if (summary.is_object() && summary.contains("jobs") && summary["jobs"].is_array()) {
      for (const nlohmann::json& job : summary["jobs"]) {
        if (!job.is_object()) continue;
        const fs::path file = JobFolder(folder, job) / "junit.xml";
        if (fs::is_regular_file(file, error)) files.push_back(file);
      }
    }
  }
  if (files.empty()) {
    return Status::NotFound(result +
                            ": no junit.xml there (the --out folder of a gate command "
                            "or a batch's has one per gate)");
  }
  for (const fs::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(const std::string xml, ReadFile(file, 1ll << 30));
    for (size_t start = xml.find("<testsuite "); start != std::string::npos;
         start = xml.find("<testsuite ", start + 1)) {
      const size_t end = xml.find("</testsuite>", start);
      if (end == std::string::npos)
        return Status::DataLoss(file.string() + ": a <testsuite> is not closed");
      suites += "  " + xml.substr(start, end + std::string("</testsuite>").size() - start) + "\n";
    }
  }
  return Status::OK();
}

// A batch folder's jobs each get their own page, report.html beside their report.json, which the
// batch page's grid links to ("page": a file:// URL, so the link holds wherever the page is put).
Status WriteJobPages(const std::string& result, nlohmann::json& summary) {
  fs::path folder = result;
  std::error_code error;
  if (!fs::is_directory(folder, error))
    folder = folder.parent_path().empty() ? "." : folder.parent_path();
  if (!summary.contains("jobs") || !summary["jobs"].is_array()) return Status::OK();
  for (nlohmann::json& job : summary["jobs"]) {
    if (!job.is_object()) continue;
    const fs::path job_folder = JobFolder(folder, job);
    Result<nlohmann::json> report = ReadResult(job_folder.string());
    if (!report.ok()) continue;  // a job that stopped before writing one: the grid says why
    const fs::path page = fs::absolute(job_folder / "report.html", error);
    CONVGATE_RETURN_IF_ERROR(WriteText(page.string(), report::RenderHtml({*report})));
    job["page"] = "file://" + page.string();
  }
  return Status::OK();
}

class ReportCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "report",
        "Render saved results for people: an HTML page (charts inline, no network needed) or a "
        "Markdown summary for CI (printed when neither --html nor --markdown is given)");
    app->add_option("RESULT", results_,
                    "A result folder (--out of any command), a report.json, or a batch folder "
                    "(or its summary.json); several make one page");
    app->footer(kReportExitCodes);
    flags_.SetGroup("Output");
    flags_.Add(TextFlag("--html", "FILE", "Write the HTML report here", {"report.html"}, html_));
    flags_.Add(TextFlag("--markdown", "FILE",
                        "Write the Markdown summary here ($GITHUB_STEP_SUMMARY, an MR note)",
                        {"summary.md"}, markdown_));
    flags_.Add(TextFlag("--junit", "FILE",
                        "Write one JUnit XML of every RESULT's test suites here (a batch folder: "
                        "every job's)",
                        {"all.xml"}, junit_));
    flags_.SetGroup("Results store");
    flags_.Add(TextFlag("--store", "PATH|URL",
                        "Render a results store (SQLite file or PostgreSQL URL): the latest "
                        "verdict of each model and conversion, and each one's figures across runs "
                        "with regressions marked",
                        {"results/convgate.db"}, store_));
    flags_.Add(Flag{.name = "--since",
                    .value_name = "DATE|AGE",
                    .help = "With --store: only jobs finished at or after DATE (UTC), or within "
                            "AGE of now",
                    .examples = {"2026-11-01", "7d"},
                    .apply = [this](const std::string& value) -> Status {
                      CONVGATE_ASSIGN_OR_RETURN(since_, SinceTime(value));
                      return Status::OK();
                    }});
    flags_.Add(IntegerFlag("--run", "ID",
                           "With --store: only the jobs of this run (history's run column)", {"3"},
                           1, std::numeric_limits<int>::max(), run_));
    flags_.AddCheck([this](const FlagSet&) -> Status {
      if (run_ > 0 && store_.empty()) {
        return Status::InvalidArgument("--run selects the jobs of a results store: give --store");
      }
      if (!since_.empty() && store_.empty()) {
        return Status::InvalidArgument("--since selects the jobs of a results store: give --store");
      }
      if (store_.empty() && results_.empty()) {
        return Status::InvalidArgument(
            "report needs a RESULT (a result folder, report.json or "
            "batch folder) or --store");
      }
      return Status::OK();
    });
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    std::vector<nlohmann::json> documents;
    if (!store_.empty()) {
      Result<nlohmann::json> history = ReadStore(store_, since_, run_);
      if (!history.ok()) return ReportError(gate::Stage::kLoad, history.status());
      documents.push_back(std::move(history).value());
    }
    for (const std::string& result : results_) {
      Result<nlohmann::json> document = ReadResult(result);
      if (!document.ok()) return ReportError(gate::Stage::kLoad, document.status());
      if (!html_.empty() && document->contains("jobs") && document->contains("manifest")) {
        if (Status pages = WriteJobPages(result, *document); !pages.ok()) {
          return ReportError(gate::Stage::kWrite, pages);
        }
      }
      documents.push_back(std::move(document).value());
    }
    if (!junit_.empty()) {
      if (results_.empty()) {
        return ReportError(gate::Stage::kFlags,
                           Status::InvalidArgument("--junit collects the junit.xml files of "
                                                   "RESULT folders: give one"));
      }
      std::string suites;
      for (const std::string& result : results_) {
        if (Status collected = CollectSuites(result, suites); !collected.ok()) {
          return ReportError(gate::Stage::kLoad, collected);
        }
      }
      if (Status written = WriteText(junit_,
                                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                     "<testsuites>\n" +
                                         suites + "</testsuites>\n");
          !written.ok()) {
        return ReportError(gate::Stage::kWrite, written);
      }
      std::cout << "wrote " << ForTerminal(junit_) << "\n";
    }
    if (html_.empty() && markdown_.empty()) {
      if (!junit_.empty()) return ExitCode::kPassed;
      std::cout << ForTerminal(report::RenderMarkdown(documents));
      return ExitCode::kPassed;
    }
    std::vector<std::string> written;
    const bool ok = WritePages(html_, markdown_, documents, written);
    for (const std::string& path : written) std::cout << "wrote " << ForTerminal(path) << "\n";
    if (!ok) return ExitCode::kCannotRun;
    return ExitCode::kPassed;
  }

 private:
  std::vector<std::string> results_;
  std::string html_;
  std::string markdown_;
  std::string junit_;
  std::string store_;
  std::string since_;
  int run_ = 0;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace convgate::cli
