#include "backends/exec/exec_protocol.h"

#include <unistd.h>

#include <cstdlib>
#include <regex>

#include "convgate/core/command_line.h"
#include "convgate/core/redact.h"

namespace convgate::backends {
namespace {

// Enough of a runner's stderr to show a Python traceback's end in a one-line-per-error console;
// report.json keeps the whole captured tail (64 KiB).
constexpr size_t kStderrLinesInMessage = 20;

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
  return text;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ", ") + name;
  return joined.empty() ? "nothing" : joined;
}

bool AllPositional(const TensorMap& tensors) {
  static const std::regex kPositional("arr_[0-9]+");
  if (tensors.empty()) return false;
  for (const auto& entry : tensors) {
    if (!std::regex_match(entry.name, kPositional)) return false;
  }
  return true;
}

Result<TensorMap> TakeNamed(TensorMap& written, const std::vector<std::string>& names,
                            const std::string& npz, StatusCode missing_code) {
  TensorMap selected;
  for (const std::string& name : names) {
    Tensor* tensor = written.Find(name);
    if (tensor == nullptr) {
      return Status(missing_code, npz + " written by the command has no output '" + name +
                                      "' (it holds: " + JoinNames(written.Names()) + ")");
    }
    CONVGATE_RETURN_IF_ERROR(selected.Insert(name, std::move(*tensor)));
  }
  return selected;
}

bool Mentions(const std::vector<std::string>& argv_template, std::string_view placeholder) {
  for (const std::string& arg : argv_template) {
    if (arg.find(placeholder) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string ExecCommand::What() const {
  return "exec command `" + RedactPasswords(JoinCommandLine(argv_template)) + "` on " +
         model.string();
}

Status CheckTemplate(const std::vector<std::string>& argv_template) {
  if (argv_template.empty()) {
    return Status::InvalidArgument(
        "the exec backend needs a command (--exec, --source-exec or --target-exec), e.g. "
        "'python3 runner.py {model} {inputs} {outputs}'");
  }
  const bool inputs_dir = Mentions(argv_template, "{inputs_dir}");
  const bool outputs_dir = Mentions(argv_template, "{outputs_dir}");
  if (inputs_dir != outputs_dir) {
    return Status::InvalidArgument(std::string("the exec command has ") +
                                   (inputs_dir ? "{inputs_dir}" : "{outputs_dir}") + " but not " +
                                   (inputs_dir ? "{outputs_dir}" : "{inputs_dir}") +
                                   ": a command serving every sample needs both folders");
  }
  if (inputs_dir || Mentions(argv_template, "{outputs}")) return Status::OK();
  return Status::InvalidArgument(
      "the exec command has no {outputs} placeholder, so it cannot be told where to write "
      "outputs.npz (or {inputs_dir} and {outputs_dir}, for one process serving every sample)");
}

bool ServesEverySample(const std::vector<std::string>& argv_template) {
  return Mentions(argv_template, "{inputs_dir}") && Mentions(argv_template, "{outputs_dir}");
}

std::vector<std::string> SubstitutePlaceholders(const std::vector<std::string>& argv_template,
                                                const ExecPaths& paths) {
  std::vector<std::string> argv;
  for (const std::string& arg : argv_template) {
    std::string substituted = ReplaceAll(arg, "{model}", paths.model.string());
    substituted = ReplaceAll(std::move(substituted), "{inputs_dir}", paths.inputs_dir.string());
    substituted = ReplaceAll(std::move(substituted), "{outputs_dir}", paths.outputs_dir.string());
    substituted = ReplaceAll(std::move(substituted), "{inputs}", paths.inputs.string());
    argv.push_back(ReplaceAll(std::move(substituted), "{outputs}", paths.outputs.string()));
  }
  return argv;
}

Result<std::filesystem::path> FindProgram(const std::string& program) {
  auto check = [&](const std::filesystem::path& path) -> Result<std::filesystem::path> {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
      return Status::NotFound("exec command '" + program + "': no such file");
    }
    if (::access(path.c_str(), X_OK) != 0) {
      return Status::FailedPrecondition("exec command '" + program + "': " + path.string() +
                                        " is not executable");
    }
    return path;
  };
  if (program.empty()) return Status::InvalidArgument("the exec command's program name is empty");
  if (program.find('/') != std::string::npos) return check(program);
  const char* path_env = std::getenv("PATH");
  std::string_view dirs = path_env != nullptr ? path_env : "";
  while (true) {
    const size_t colon = dirs.find(':');
    // An empty PATH entry means the current directory, as for execvp.
    std::string dir(dirs.substr(0, colon));
    Result<std::filesystem::path> found =
        check(std::filesystem::path(dir.empty() ? "." : dir) / program);
    if (found.ok()) return found;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return Status::NotFound("exec command '" + program + "': no such program in PATH");
}

Status CommandFailure(const SubprocessResult& result, const std::string& what) {
  std::string message = what + " " + result.Describe();
  const std::string tail = TailLines(result.stderr_tail, kStderrLinesInMessage);
  message += tail.empty() ? " and printed nothing on stderr" : "; its stderr ends:\n" + tail;
  return Status::Unavailable(message);
}

Result<TensorMap> SelectOutputs(TensorMap written, const Signature& signature,
                                const std::vector<std::string>& requested, const std::string& npz) {
  if (!requested.empty()) return TakeNamed(written, requested, npz, StatusCode::kNotFound);
  if (signature.positional_outputs) return written;
  std::vector<std::string> declared;
  for (const TensorInfo& info : signature.outputs) declared.push_back(info.name);
  // AllPositional implies a non-empty archive, so with equal counts declared[0] exists.
  if (AllPositional(written) && written.size() == declared.size() &&
      written.Find(declared[0]) == nullptr) {
    TensorMap renamed;
    for (size_t idx = 0; idx < declared.size(); ++idx) {
      Tensor* tensor = written.Find("arr_" + std::to_string(idx));
      if (tensor == nullptr) return TakeNamed(written, declared, npz, StatusCode::kDataLoss);
      renamed.InsertOrAssign(declared[idx], std::move(*tensor));
    }
    return renamed;
  }
  return TakeNamed(written, declared, npz, StatusCode::kDataLoss);
}

}  // namespace convgate::backends
