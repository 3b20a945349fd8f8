// `convgate report RESULT...`: saved results rendered for people: an HTML page (--html), a
// Markdown summary (--markdown, or on stdout when neither is asked for), from result folders,
// report.json files and batch folders (summary.json), as the gate commands' own --html/--markdown.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "convgate/core/file_util.h"
#include "convgate/report/html.h"

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

Status WriteText(const std::string& path, const std::string& text) {
  std::error_code error;
  if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) {
    fs::create_directories(parent, error);
  }
  return WriteFileAtomic(path, text);
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
                    "(or its summary.json); several make one page")
        ->required();
    app->footer(kReportExitCodes);
    flags_.SetGroup("Output");
    flags_.Add(TextFlag("--html", "FILE", "Write the HTML report here", {"report.html"}, html_));
    flags_.Add(TextFlag("--markdown", "FILE",
                        "Write the Markdown summary here ($GITHUB_STEP_SUMMARY, an MR note)",
                        {"summary.md"}, markdown_));
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    std::vector<nlohmann::json> documents;
    for (const std::string& result : results_) {
      Result<nlohmann::json> document = ReadResult(result);
      if (!document.ok()) return ReportError(gate::Stage::kLoad, document.status());
      documents.push_back(std::move(document).value());
    }
    if (html_.empty() && markdown_.empty()) {
      std::cout << ForTerminal(report::RenderMarkdown(documents));
      return ExitCode::kPassed;
    }
    for (const auto& [path, text] :
         {std::pair{html_, html_.empty() ? "" : report::RenderHtml(documents)},
          std::pair{markdown_, markdown_.empty() ? "" : report::RenderMarkdown(documents)}}) {
      if (path.empty()) continue;
      if (Status written = WriteText(path, text); !written.ok()) {
        return ReportError(gate::Stage::kWrite, written);
      }
      std::cout << "wrote " << ForTerminal(path) << "\n";
    }
    return ExitCode::kPassed;
  }

 private:
  std::vector<std::string> results_;
  std::string html_;
  std::string markdown_;
};

}  // namespace

std::unique_ptr<Command> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace convgate::cli
