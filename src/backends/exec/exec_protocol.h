// The exec protocol (docs/backends.md), in two modes:
//  - one process per sample: convgate writes the sample's inputs to inputs.npz in a fresh
//    temporary folder, runs the user's command with {model}, {inputs} and {outputs} substituted,
//    and reads the outputs back from outputs.npz;
//  - one process for every sample (a template with {inputs_dir} and {outputs_dir}): convgate
//    starts the command once; for each sample it writes {inputs_dir}/NAME.npz and the line NAME
//    to the command's stdin, and the command writes {outputs_dir}/NAME.npz and answers with the
//    line "ok NAME" (or "error MESSAGE") on its stdout; it exits when its stdin ends
//    (exec_serve.h).
// The pieces here hold no process or file state, so they are tested directly.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/limits.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"
#include "convgate/core/subprocess.h"
#include "convgate/core/tensor.h"

namespace convgate::backends {

// What an exec model of either mode runs: the model file, its signature, the command and its
// limits.
struct ExecCommand {
  ExecCommand(std::filesystem::path model_path, Signature model_signature,
              const LoadOptions& options)
      : model(std::move(model_path)),
        signature(std::move(model_signature)),
        argv_template(options.exec_argv),
        timeout_seconds(options.timeout_seconds),
        limits(options.limits) {}

  // "exec command `python3 r.py {model} ...` on MODEL", passwords redacted: how messages name it.
  std::string What() const;

  std::filesystem::path model;
  Signature signature;
  std::vector<std::string> argv_template;
  double timeout_seconds;
  Limits limits;
};

struct ExecPaths {
  std::filesystem::path model;
  std::filesystem::path inputs;       // <temp>/inputs.npz
  std::filesystem::path outputs;      // <temp>/outputs.npz
  std::filesystem::path inputs_dir;   // serving: <temp>/inputs
  std::filesystem::path outputs_dir;  // serving: <temp>/outputs
};

// InvalidArgument when the template is empty, lacks {outputs} (the command would not know where
// to write), or names only one of {inputs_dir} and {outputs_dir}. A template without {model} or
// {inputs} is allowed: a runner may hard-code them.
Status CheckTemplate(const std::vector<std::string>& argv_template);

// Whether the template asks for one process serving every sample: it has {inputs_dir} and
// {outputs_dir}.
bool ServesEverySample(const std::vector<std::string>& argv_template);

// Each element with every "{model}", "{inputs}", "{outputs}", "{inputs_dir}" and "{outputs_dir}"
// replaced by the path (anywhere in
// the element: "--out={outputs}" works). Other braces are left alone, so "python3 -c '...{...}'"
// passes through.
std::vector<std::string> SubstitutePlaceholders(const std::vector<std::string>& argv_template,
                                                const ExecPaths& paths);

// Where argv[0] runs from: itself when it contains a '/', else the first executable file of that
// name in $PATH. NotFound naming the program otherwise; FailedPrecondition when the file exists
// but is not executable.
Result<std::filesystem::path> FindProgram(const std::string& program);

// The Status for a command that did not succeed: Unavailable with how it ended ("exited with code
// 3", "timed out after 1 s", "was killed by signal 11") and the last lines of its stderr. `what`
// names the command and the model.
Status CommandFailure(const SubprocessResult& result, const std::string& what);

// The tensors Run returns, taken from what the command wrote to outputs.npz (`written`, in archive
// order, moved from):
//  - names requested: exactly those, in that order; a missing one is NotFound;
//  - none requested and the signature declares outputs: those, in declaration order. numpy's
//    positional names (np.savez(path, a, b) writes arr_0, arr_1) are matched to them by position
//    when the counts agree; a declared output the archive lacks is DataLoss listing what it holds;
//  - none requested and outputs unknown (positional_outputs): everything, named as written.
// `npz` names the file in messages.
Result<TensorMap> SelectOutputs(TensorMap written, const Signature& signature,
                                const std::vector<std::string>& requested, const std::string& npz);

}  // namespace convgate::backends
