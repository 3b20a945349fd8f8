#include "convgate/session/save_paths.h"

#include <cctype>

#include "convgate/io/test_case.h"

namespace convgate::session {
namespace {

namespace fs = std::filesystem;

enum class Layout { kNpz, kNpy, kTestCase, kOther };

std::string LowerExtension(const fs::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// A folder is named without an extension (or ends in '/', or exists as one): "inputs.json" must
// not silently become a folder of that name.
Layout LayoutOf(const fs::path& path) {
  const std::string ext = LowerExtension(path);
  // A .safetensors holds named tensors as an .npz does (sample_<i>/<name> for many samples).
  if (ext == ".npz" || ext == ".safetensors") return Layout::kNpz;
  if (ext == ".npy") return Layout::kNpy;
  std::error_code ec;
  if (ext.empty() || fs::is_directory(path, ec)) return Layout::kTestCase;
  return Layout::kOther;
}

// "dir", "./dir/" and a symlink to it name one place.
fs::path Normal(const fs::path& path) {
  std::error_code ec;
  fs::path normal = fs::weakly_canonical(path, ec);
  if (ec) normal = fs::absolute(path, ec);
  normal = normal.lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

bool SamePath(const fs::path& a, const fs::path& b) { return Normal(a) == Normal(b); }

bool HoldsNpyFiles(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (LayoutOf(it->path()) == Layout::kNpy) return true;
  }
  return false;
}

GateError Usage(const std::string& message) {
  return GateError{Stage::kFlags, Status::InvalidArgument(message)};
}

struct SaveFlag {
  std::string flag;  // "--save-inputs"
  fs::path path;
  io::TestCasePart part;
};

std::string Named(const SaveFlag& save) { return save.flag + " " + save.path.string(); }

std::optional<GateError> CheckLayout(const SaveFlag& save) {
  if (LayoutOf(save.path) == Layout::kOther) {
    return Usage(Named(save) + ": is neither an .npz or .safetensors file nor a folder (" +
                 LowerExtension(save.path) +
                 " files are not written); use NAME.npz or NAME.safetensors, or a folder name "
                 "without an extension for the ONNX test-case layout");
  }
  if (LayoutOf(save.path) == Layout::kNpy) {
    return Usage(Named(save) +
                 ": an .npy holds one tensor, not a dataset; use an .npz, or a folder for the "
                 "ONNX test case layout");
  }
  if (LayoutOf(save.path) == Layout::kTestCase && !io::IsTestCasePath(save.path) &&
      HoldsNpyFiles(save.path)) {
    return Usage(Named(save) +
                 ": the folder holds .npy files (a folder of <name>.npy); a test case written "
                 "into it would hide them when it is loaded; choose another folder");
  }
  return std::nullopt;
}

std::optional<GateError> CheckNotRead(const SaveFlag& save, const std::vector<ReadPath>& read) {
  for (const ReadPath& other : read) {
    if (!other.path.empty() && SamePath(save.path, other.path)) {
      return Usage(Named(save) + " is " + other.role + " this run reads: saving there would " +
                   "overwrite it; choose another path");
    }
  }
  return std::nullopt;
}

// The other half of a test case already in the folder belongs to tensors this run did not
// compute: new files beside it would make a test case whose inputs did not produce its outputs.
std::optional<GateError> CheckOtherHalf(const SaveFlag& save) {
  if (LayoutOf(save.path) != Layout::kTestCase) return std::nullopt;
  const bool inputs = save.part == io::TestCasePart::kInputs;
  const io::TestCasePart other = inputs ? io::TestCasePart::kOutputs : io::TestCasePart::kInputs;
  if (!io::TestCaseHolds(save.path, other)) return std::nullopt;
  if (inputs) {
    return Usage(Named(save) +
                 ": the folder already holds outputs (output_K.pb) that these inputs did not "
                 "produce; saving the inputs beside them would pair them wrongly. Save this "
                 "run's outputs there too (--save-outputs " +
                 save.path.string() + ") or choose another folder");
  }
  return Usage(Named(save) +
               ": the folder already holds inputs (input_K.pb) that this run did not use; saving "
               "the outputs beside them would pair them wrongly. Save this run's inputs there too "
               "(--save-inputs " +
               save.path.string() + "), load the inputs from there (--load-inputs " +
               save.path.string() + "), or choose another folder");
}

std::optional<GateError> CheckInputsSave(const SaveFlag& save, const DataOptions& options,
                                         bool same_folder) {
  if (options.load_inputs && SamePath(save.path, *options.load_inputs)) {
    return Usage(Named(save) +
                 " is where the inputs are loaded from (--load-inputs): they are saved there "
                 "already");
  }
  return same_folder ? std::nullopt : CheckOtherHalf(save);
}

std::optional<GateError> CheckOutputsSave(const SaveFlag& save, const DataOptions& options,
                                          bool same_folder) {
  const bool loaded_here = options.load_inputs && SamePath(save.path, *options.load_inputs);
  if (loaded_here) {
    // Outputs beside the test case's own inputs complete it; any other layout would be replaced.
    if (LayoutOf(save.path) == Layout::kTestCase && io::IsTestCasePath(save.path)) {
      return std::nullopt;
    }
    return Usage(Named(save) +
                 " is where the inputs are loaded from (--load-inputs): the outputs would "
                 "replace them; save them to another file (an ONNX test-case folder can hold "
                 "both)");
  }
  return same_folder ? std::nullopt : CheckOtherHalf(save);
}

}  // namespace

std::optional<GateError> CheckSavePaths(const DataOptions& options,
                                        const std::vector<ReadPath>& read) {
  std::optional<SaveFlag> inputs, outputs;
  if (options.save_inputs) {
    inputs = SaveFlag{"--save-inputs", *options.save_inputs, io::TestCasePart::kInputs};
  }
  if (options.save_outputs) {
    outputs = SaveFlag{"--save-outputs", *options.save_outputs, io::TestCasePart::kOutputs};
  }
  const bool same = inputs && outputs && SamePath(inputs->path, outputs->path);
  if (same && LayoutOf(inputs->path) == Layout::kNpz) {
    return Usage("--save-inputs and --save-outputs both name " + inputs->path.string() +
                 ": an .npz holds one set of tensors, so the outputs would replace the inputs. "
                 "Save them to two files (inputs.npz, outputs.npz), or to one folder, which "
                 "holds both as an ONNX test case (input_K.pb beside output_K.pb)");
  }
  for (const std::optional<SaveFlag>& save : {inputs, outputs}) {
    if (!save) continue;
    if (auto error = CheckLayout(*save)) return error;
    if (auto error = CheckNotRead(*save, read)) return error;
  }
  if (inputs) {
    if (auto error = CheckInputsSave(*inputs, options, same)) return error;
  }
  if (outputs) {
    if (auto error = CheckOutputsSave(*outputs, options, same)) return error;
  }
  return std::nullopt;
}

}  // namespace convgate::session
