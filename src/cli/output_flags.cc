// The output group: result files, JSON on stdout, colour.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "cli/flag_groups.h"
#include "cli/progress_line.h"
#include "convgate/core/utf8.h"
#include "convgate/report/json_text.h"

namespace convgate::cli {

namespace {

// A file the command writes: not a folder, and not empty.
Flag FileFlag(const char* name, const char* help, std::vector<std::string> examples,
              std::string& target) {
  return Flag{.name = name,
              .value_name = "FILE",
              .help = help,
              .examples = std::move(examples),
              .apply = [&target](const std::string& value) -> Status {
                std::error_code error;
                if (value.empty()) return Status::InvalidArgument("the file name is empty");
                if (std::filesystem::is_directory(value, error)) {
                  return Status::InvalidArgument("'" + value + "' is a folder, not a file");
                }
                target = value;
                return Status::OK();
              }};
}

}  // namespace

void AddOutputFlags(FlagSet& flags, OutputOptions& options, OutputUse use) {
  flags.SetGroup("Output");
  const OutputOptions defaults;
  if (use == OutputUse::kGate) {
    flags.Add(Flag{.name = "--out",
                   .value_name = "DIR",
                   .help = "Folder for report.json, verify_result.json and junit.xml (created if "
                           "needed; files are replaced atomically)",
                   .examples = {"results/"},
                   .apply = [&options](const std::string& value) -> Status {
                     std::error_code error;
                     if (value.empty()) return Status::InvalidArgument("the folder is empty");
                     if (std::filesystem::exists(value, error) &&
                         !std::filesystem::is_directory(value, error)) {
                       return Status::InvalidArgument("'" + value + "' exists and is not a folder");
                     }
                     options.out_dir = value;
                     return Status::OK();
                   }});
    flags.Add(FileFlag("--html",
                       "Also write the HTML report here: one self-contained page (charts inline, "
                       "no network needed) of the verdict, outputs, error distributions and the "
                       "per-node divergence curve",
                       {"results/report.html"}, options.html));
    flags.Add(FileFlag("--markdown",
                       "Also write a short Markdown summary here, for a CI step summary or merge "
                       "request note (verdict, failing outputs, culprit, tolerances that pass)",
                       {"summary.md", "$GITHUB_STEP_SUMMARY"}, options.markdown));
  }
  if (use == OutputUse::kGate) {
    flags.Add(Flag{.name = "--quiet",
                   .help = "No progress on stderr (a line redrawn on a terminal, a line every "
                           "10 s of long work otherwise)",
                   .arity = FlagArity::kSwitch,
                   .apply = [&options](const std::string&) -> Status {
                     options.quiet = true;
                     SetQuietProgress();
                     return Status::OK();
                   }});
  }
  flags.Add(SwitchFlag("--json",
                       use == OutputUse::kJson ? "Print JSON instead of text"
                                               : "Print report.json to stdout instead of the table",
                       options.json));
  flags.Add(SwitchFlag("--pretty",
                       "Indent JSON (printed and written); compact JSON is several times smaller",
                       options.pretty));
  if (use == OutputUse::kJson) return;
  flags.Add(Flag{.name = "--color",
                 .value_name = "auto|always|never",
                 .help = "Colour the table (auto: only on a terminal, never with NO_COLOR set)",
                 .default_text = defaults.color,
                 .examples = {"never"},
                 .apply = [&options](const std::string& value) -> Status {
                   if (value != "auto" && value != "always" && value != "never") {
                     return Status::InvalidArgument("'" + value + "' is not auto, always or never");
                   }
                   options.color = value;
                   return Status::OK();
                 }});
}

bool UseColor(const OutputOptions& options) {
  if (options.color == "always") return true;
  if (options.color == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return ::isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || no_color[0] == '\0');
}

namespace {

// Length of the SGR sequence ("\x1b[1m", "\x1b[31m", "\x1b[0m") at text[pos], or 0.
size_t ColorCodeLength(std::string_view text, size_t pos) {
  if (text.substr(pos, 2) != "\x1b[") return 0;
  size_t end = pos + 2;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == ';')) {
    ++end;
  }
  return end < text.size() && text[end] == 'm' ? end + 1 - pos : 0;
}

}  // namespace

std::string ForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t escape = std::min(text.find('\x1b', pos), text.size());
    out += EscapeForDisplay(text.substr(pos, escape - pos));
    if (escape == text.size()) break;
    const size_t color = ColorCodeLength(text, escape);
    out += color > 0 ? std::string(text.substr(escape, color)) : EscapeForDisplay("\x1b");
    pos = escape + std::max<size_t>(color, 1);
  }
  return out;
}

std::string DumpJson(const nlohmann::json& json, const OutputOptions& options) {
  return report::DumpJson(json, options.pretty ? 2 : -1);
}

}  // namespace convgate::cli
