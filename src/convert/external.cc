// Any converter given as a command template: argv with {src} and {out} substituted, run without a
// shell, with the driver's timeout and retries.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "convert/converter.h"
#include "convert/retry.h"
#include "convgate/core/command_line.h"
#include "convgate/core/file_util.h"

namespace convgate::convert {
namespace {

constexpr std::string_view kSource = "{src}";
constexpr std::string_view kOutput = "{out}";

bool Contains(const std::vector<std::string>& argv, std::string_view placeholder) {
  for (const std::string& arg : argv) {
    if (arg.find(placeholder) != std::string::npos) return true;
  }
  return false;
}

std::string ReplaceAll(std::string text, std::string_view from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

bool IsExecutableFile(const std::filesystem::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// The program posix_spawnp would run, or NotFound.
Result<std::filesystem::path> ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (IsExecutableFile(program)) return std::filesystem::path(program);
    return Status::NotFound("converter program '" + program +
                            "' does not exist or is not "
                            "executable");
  }
  const char* path_env = std::getenv("PATH");
  std::string_view dirs = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::filesystem::path dir(dirs.substr(0, colon).empty() ? "." : dirs.substr(0, colon));
    if (IsExecutableFile(dir / program)) return dir / program;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return Status::NotFound("converter program '" + program + "' is not in PATH");
}

struct Identity {
  std::string text;  // hashed into the cache key
  std::string tool;
  std::string digest;
};

// What the converter is: its argv template, and the content of its program and of every argument
// naming an existing file (an interpreter's script, a config file), so that editing the script
// changes the key even when the command line does not.
Result<Identity> IdentifyConverter(const std::vector<std::string>& argv) {
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path program, ResolveProgram(argv[0]));
  Identity identity;
  identity.tool = program.filename().string();
  identity.text = "argv " + JoinCommandLine(argv) + "\n";
  CONVGATE_ASSIGN_OR_RETURN(std::string program_sha, Sha256File(program));
  identity.text += "program " + program.string() + " " + program_sha + "\n";
  bool named_script = false;
  for (size_t arg_idx = 1; arg_idx < argv.size(); ++arg_idx) {
    const std::string& arg = argv[arg_idx];
    std::error_code error;
    if (arg.find('{') != std::string::npos || !std::filesystem::is_regular_file(arg, error)) {
      continue;
    }
    CONVGATE_ASSIGN_OR_RETURN(std::string sha, Sha256File(arg));
    identity.text += "file " + arg + " " + sha + "\n";
    if (!named_script) identity.tool += " " + std::filesystem::path(arg).filename().string();
    named_script = true;
  }
  identity.digest = Sha256Hex(identity.text);
  return identity;
}

AttemptResult RunExternal(const std::vector<std::string>& argv_template,
                          const std::filesystem::path& source, const std::filesystem::path& out,
                          double timeout_seconds) {
  std::vector<std::string> argv;
  for (const std::string& arg : argv_template) {
    argv.push_back(ReplaceAll(ReplaceAll(arg, kSource, source.string()), kOutput, out.string()));
  }
  SubprocessOptions options;
  options.timeout_seconds = timeout_seconds;
  options.stall_seconds = StallSecondsOrDefault();
  Result<SubprocessResult> run = RunSubprocess(argv, options);
  if (!run.ok()) {
    AttemptResult attempt;
    attempt.error = run.status().code() == StatusCode::kUnavailable
                        ? ConversionError::kFailed
                        : ConversionError::kConverterMissing;
    attempt.problem = run.status().message();
    return attempt;
  }
  return AttemptFromProcess(*run);
}

}  // namespace

Result<Converter> MakeExternalConverter(const ConversionRequest& request) {
  const std::vector<std::string>& argv = request.converter_argv;
  if (argv.empty()) {
    return Status::InvalidArgument(
        "an external conversion needs a command: --converter 'CMD ... {src} {out}'");
  }
  if (!Contains(argv, kSource) || !Contains(argv, kOutput)) {
    return Status::InvalidArgument("the converter command '" + JoinCommandLine(argv) +
                                   "' must contain {src} (the source) and {out} (where it "
                                   "writes the result)");
  }
  CONVGATE_ASSIGN_OR_RETURN(Identity identity, IdentifyConverter(argv));
  Converter converter;
  converter.tool = identity.tool;
  auto version = request.params.find("version");
  converter.tool_version =
      version != request.params.end() ? version->second : "sha256:" + identity.digest.substr(0, 12);
  converter.display = "external converter '" + JoinCommandLine(argv) + "'";
  converter.identity = identity.text;
  converter.attempt = [argv](const std::filesystem::path& source, const std::filesystem::path& out,
                             double timeout) { return RunExternal(argv, source, out, timeout); };
  return converter;
}

}  // namespace convgate::convert
