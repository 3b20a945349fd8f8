#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "convgate/core/file_util.h"
#include "convgate/report/html.h"

namespace convgate::cli {
namespace {

const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

// "results/" and "results" both print as "results/".
std::string FolderForDisplay(const std::string& dir) {
  std::string shown = dir;
  while (shown.size() > 1 && shown.back() == '/') shown.pop_back();
  return shown + "/";
}

}  // namespace

double ProcessSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

ExitCode ReportError(gate::Stage stage, const Status& status) {
  const gate::GateError error{stage, status};
  if (stage == gate::Stage::kFlags) {
    std::cerr << "convgate: " << ForTerminal(status.message()) << "\n"
              << "Run 'convgate --help' or 'convgate COMMAND --help' for usage.\n";
  } else {
    std::cerr << "convgate: " << ForTerminal(report::ErrorLine(error)) << "\n";
  }
  return gate::ExitCodeFor(error);
}

Status WriteText(const std::string& path, const std::string& text) {
  std::error_code error;
  if (const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      !parent.empty()) {
    std::filesystem::create_directories(parent, error);  // WriteFileAtomic names what fails
  }
  return WriteFileAtomic(path, text);
}

bool WritePages(const std::string& html, const std::string& markdown,
                const std::vector<nlohmann::json>& reports, std::vector<std::string>& written) {
  bool ok = true;
  for (const auto& [path, render] :
       {std::pair{html, &report::RenderHtml}, std::pair{markdown, &report::RenderMarkdown}}) {
    if (path.empty()) continue;
    if (Status status = WriteText(path, render(reports)); !status.ok()) {
      ReportError(gate::Stage::kWrite, status);
      ok = false;
      continue;
    }
    written.push_back(path);
  }
  return ok;
}

ExitCode Finish(const OutputOptions& options, const Rendered& rendered) {
  ExitCode exit_code = rendered.exit_code;
  const bool usage_error = exit_code == ExitCode::kUsage;
  bool written = false;
  if (!options.out_dir.empty() && !usage_error) {
    Status status = report::WriteResultFiles(
        options.out_dir, rendered.report, rendered.verify_result, rendered.junit, options.pretty);
    if (!status.ok()) {
      std::cerr << "convgate: error (write): " << ForTerminal(status.message()) << "\n";
      if (exit_code != ExitCode::kInternal) exit_code = ExitCode::kCannotRun;
    }
    written = status.ok();
  } else if (!options.out_dir.empty() && rendered.verify_result_on_usage_error) {
    Status status = report::WriteVerifyResultFile(options.out_dir, rendered.verify_result);
    if (!status.ok()) {
      std::cerr << "convgate: error (write): " << ForTerminal(status.message()) << "\n";
    }
  }
  std::vector<std::string> also_written;
  // Only when a page is asked for: the report is copied into the list the pages render, and a
  // long pipeline's report can be hundreds of MiB.
  const bool pages = !options.html.empty() || !options.markdown.empty();
  if (!usage_error && pages &&
      !WritePages(options.html, options.markdown, {rendered.report}, also_written) &&
      exit_code != ExitCode::kInternal) {
    exit_code = ExitCode::kCannotRun;
  }
  if (options.json) {
    std::cout << DumpJson(rendered.printed_json.value_or(rendered.report), options) << "\n";
  } else {
    std::cout << ForTerminal(rendered.console);
    if (written) {
      std::cout << "results in " << ForTerminal(FolderForDisplay(options.out_dir)) << "\n";
    }
    for (const std::string& path : also_written) std::cout << "wrote " << ForTerminal(path) << "\n";
  }
  std::cout.flush();
  if (rendered.error) ReportError(rendered.error->stage, rendered.error->status);
  return exit_code;
}

}  // namespace convgate::cli
