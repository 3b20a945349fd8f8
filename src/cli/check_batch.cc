// `convgate check DIR` on a batch result folder (or its summary.json): every job's comparison
// re-judged under the new policy, as `check REPORT.json` does one, with a table of what each job
// was and is now.
#include "cli/check_batch.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "convgate/core/file_util.h"
#include "convgate/core/text_table.h"
#include "convgate/gate/rejudge.h"
#include "convgate/report/html.h"
#include "convgate/report/json_text.h"
#include "convgate/report/read_report.h"
#include "convgate/report/render.h"
#include "convgate/report/report.h"

namespace convgate::cli {
namespace {

namespace fs = std::filesystem;

struct JobCheck {
  std::string id;
  std::string was;  // the verdict summary.json records
  std::string now;  // "pass", "fail", "error", or "-" (not a comparison)
  std::string detail;
  ExitCode exit_code = ExitCode::kPassed;
  std::optional<report::Rendering> rendered;  // the re-judged report, when there is one
};

// One job of the summary: its folder's report.json re-judged, or why it cannot be.
JobCheck CheckJob(const nlohmann::json& job, const fs::path& folder, const compare::Policy& policy,
                  const report::Invocation& invocation) {
  JobCheck check;
  check.id = job.value("id", "");
  check.was = job.value("verdict", "");
  const std::string command = job.value("command", "");
  if (command != "compare" && command != "verify") {
    check.now = "-";
    check.detail = "a " + command + " job compared nothing: not re-judged";
    return check;
  }
  if (check.was == "error") {
    const std::string category = job.value("error_category", "");
    check.now = "error";
    check.detail = "the job stopped with an error" +
                   (category.empty() ? std::string() : " (" + category + ")") +
                   ": nothing was compared, so nothing can be re-judged";
    check.exit_code = ExitCode::kCannotRun;
    return check;
  }
  const fs::path report_path = JobFolder(folder, job) / "report.json";
  report::Invocation header;
  Result<gate::CompareReport> saved = report::ReadCompareReport(report_path, &header);
  if (!saved.ok()) {
    check.now = "error";
    check.detail = saved.status().message();
    check.exit_code = ExitCode::kCannotRun;
    return check;
  }
  report::Invocation job_invocation = invocation;
  job_invocation.model_origins = std::move(header.model_origins);
  const report::Rendering rendered = report::Render(
      gate::RejudgeCompareReport(std::move(saved).value(), policy, report_path.string()),
      job_invocation, false);
  check.exit_code = rendered.exit_code;
  check.now = rendered.report.value("verdict", "error");
  check.detail = LastLine(rendered.console);
  check.rendered = rendered;
  return check;
}

// Fail (1) over pass, a job that could not be re-judged (3) over both.
ExitCode Worst(ExitCode a, ExitCode b) {
  const auto rank = [](ExitCode code) {
    return code == ExitCode::kPassed ? 0 : code == ExitCode::kFailed ? 1 : 2;
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace

std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t newline = text.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return text.substr(start, end - start + 1);
}

std::filesystem::path JobFolder(const std::filesystem::path& batch_folder,
                                const nlohmann::json& job) {
  // The batch wrote result_dir relative to where it ran; the job's folder is that name inside
  // the batch folder, wherever the folder is now.
  auto it = job.find("result_dir");
  if (it != job.end() && it->is_string()) {
    return batch_folder / fs::path(it->get<std::string>()).filename();
  }
  it = job.find("id");
  return it != job.end() && it->is_string() ? batch_folder / it->get<std::string>() : batch_folder;
}

bool IsBatchResult(const std::filesystem::path& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return fs::is_regular_file(path / "summary.json", error);
  return path.filename() == "summary.json";
}

ExitCode CheckBatchResult(const std::filesystem::path& path, const compare::Policy& policy,
                          const OutputOptions& output, report::Invocation& invocation) {
  std::error_code error;
  const fs::path summary_path = fs::is_directory(path, error) ? path / "summary.json" : path;
  const fs::path folder = summary_path.parent_path().empty() ? "." : summary_path.parent_path();
  Result<std::string> text = ReadFile(summary_path, kMaxTextFileBytes);
  nlohmann::json summary =
      text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!text.ok() || !summary.is_object() || !summary.contains("jobs") ||
      !summary["jobs"].is_array()) {
    return ReportError(gate::Stage::kLoad,
                       text.ok() ? Status::DataLoss(summary_path.string() +
                                                    ": not a batch summary (no \"jobs\" list)")
                                 : text.status());
  }
  std::vector<JobCheck> checks;
  ExitCode exit_code = ExitCode::kPassed;
  for (const nlohmann::json& job : summary["jobs"]) {
    if (!job.is_object()) continue;
    checks.push_back(CheckJob(job, folder, policy, invocation));
    exit_code = Worst(exit_code, checks.back().exit_code);
    if (!output.out_dir.empty() && checks.back().rendered) {
      const report::Rendering& rendered = *checks.back().rendered;
      Status written =
          report::WriteResultFiles(fs::path(output.out_dir) / checks.back().id, rendered.report,
                                   rendered.verify_result, rendered.junit, output.pretty);
      if (!written.ok()) {
        ReportError(gate::Stage::kWrite, written);
        exit_code = Worst(exit_code, ExitCode::kCannotRun);
      }
    }
  }
  // --html / --markdown: one page (summary) of the re-judged jobs' reports.
  std::vector<nlohmann::json> reports;
  for (const JobCheck& check : checks) {
    if (check.rendered) reports.push_back(check.rendered->report);
  }
  std::vector<std::string> pages;
  if (!WritePages(output.html, output.markdown, reports, pages)) {
    exit_code = Worst(exit_code, ExitCode::kCannotRun);
  }
  if (output.json) {
    nlohmann::json printed = nlohmann::json::array();
    for (const JobCheck& check : checks) {
      printed.push_back({{"id", check.id},
                         {"was", check.was},
                         {"now", check.now},
                         {"exit_code", ToInt(check.exit_code)},
                         {"detail", check.detail}});
    }
    std::cout << DumpJson(printed, output) << "\n";
    return exit_code;
  }
  TextTable table({"entry", "was", "now", "detail"});
  int changed = 0;
  for (const JobCheck& check : checks) {
    if (check.now != "-" && check.now != check.was) ++changed;
    table.AddRow({check.id, check.was, check.now, check.detail},
                 check.now == "fail" || check.now == "error" ? kRed : "");
  }
  std::cout << "convgate check: " << checks.size() << " jobs of " << summary_path.string()
            << " re-judged\n"
            << table.Render(UseColor(output)) << changed << " of " << checks.size()
            << " verdicts changed\n";
  if (!output.out_dir.empty()) std::cout << "results in " << output.out_dir << "\n";
  return exit_code;
}

}  // namespace convgate::cli
