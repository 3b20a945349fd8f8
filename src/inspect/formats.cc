// inspect on model formats that are not ONNX: what the file is, what can be read from it without
// running foreign code (pickles are never unpickled: that runs arbitrary code), and which convgate
// command takes it.
#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "convgate/backends/registry.h"
#include "convgate/core/file_util.h"
#include "convgate/core/json_field.h"
#include "convgate/core/units.h"
#include "convgate/graph/task.h"
#include "convgate/io/safetensors.h"
#include "inspect/internal.h"

namespace convgate::inspect::internal {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kInspectSchemaVersion = 1;
// Pickle and code members are read whole; TorchScript keeps them small (the weights are separate
// records), so anything bigger than this is not worth reading for a summary.
constexpr uint64_t kMaxMemberBytes = 64 << 20;
// Text views list this many tensors or members; --json lists them all.
constexpr size_t kListedInText = 20;

// What the text view shows, line by line, beside the JSON document.
struct View {
  json doc;
  std::vector<std::pair<std::string, std::string>> lines;  // label, text
  std::vector<std::string> commands;                       // convgate commands that take the file
  std::string note;

  void Add(const std::string& key, const json& value, const std::string& label,
           const std::string& text) {
    doc[key] = value;
    lines.emplace_back(label, text);
  }
};

// A path as a shell word: quoted when it holds anything a shell would split or expand.
std::string ShellWord(const std::string& word) {
  if (word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "_-./:=,+@%") == std::string::npos) {
    return word;
  }
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string Plural(size_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

bool HasBackend(const std::string& name) {
  for (const std::string& backend : backends::AvailableBackends()) {
    if (backend == name) return true;
  }
  return false;
}

// --- pickles ------------------------------------------------------------------------------------

// The class a pickle builds first ("collections.OrderedDict", "__torch__.M"), read from its first
// GLOBAL (protocol 2) or STACK_GLOBAL (protocol 4 and later) opcode without unpickling anything.
std::optional<std::string> FirstPickleClass(std::string_view bytes) {
  size_t pos = 0;
  if (bytes.size() > 2 && bytes[0] == '\x80') pos = 2;       // PROTO n
  if (pos < bytes.size() && bytes[pos] == '\x95') pos += 9;  // FRAME with an 8-byte length
  if (pos >= bytes.size()) return std::nullopt;
  if (bytes[pos] == 'c') {  // GLOBAL "module\nname\n"
    const size_t module_end = bytes.find('\n', pos + 1);
    if (module_end == std::string_view::npos) return std::nullopt;
    const size_t name_end = bytes.find('\n', module_end + 1);
    if (name_end == std::string_view::npos) return std::nullopt;
    return std::string(bytes.substr(pos + 1, module_end - pos - 1)) + "." +
           std::string(bytes.substr(module_end + 1, name_end - module_end - 1));
  }
  std::string parts[2];
  for (std::string& part : parts) {  // SHORT_BINUNICODE module, name (each maybe MEMOIZEd)
    if (pos + 1 >= bytes.size() || bytes[pos] != '\x8c') return std::nullopt;
    const auto length = static_cast<uint8_t>(bytes[pos + 1]);
    if (pos + 2 + length > bytes.size()) return std::nullopt;
    part = std::string(bytes.substr(pos + 2, length));
    pos += 2 + length;
    if (pos < bytes.size() && bytes[pos] == '\x94') ++pos;
  }
  if (pos >= bytes.size() || bytes[pos] != '\x93') return std::nullopt;
  return parts[0] + "." + parts[1];
}

const char kPickleNote[] =
    "convgate never unpickles a file (unpickling runs arbitrary code), and a pickled model needs "
    "its Python class to load. Load it in PyTorch and save TorchScript "
    "(torch.jit.script(model).save(\"model.pt\")) for `convgate run` / `compare` with the torch "
    "backend, or export ONNX (torch.onnx.export) for every convgate command.";

void DescribeRoot(const std::optional<std::string>& root, View& view) {
  if (!root) return;
  std::string meaning = *root;
  if (*root == "collections.OrderedDict" || *root == "builtins.dict") {
    meaning += " (a state_dict or a dict of them, most likely: weights without the model's code)";
  }
  view.Add("root_class", *root, "holds", meaning);
}

// --- zips ---------------------------------------------------------------------------------------

// PyTorch writes every record under one folder named after the file.
std::string ZipRoot(const std::vector<io::ZipMember>& members) {
  if (members.empty()) return "";
  const std::string& first = members[0].name;
  const size_t slash = first.find('/');
  return slash == std::string::npos ? "" : first.substr(0, slash + 1);
}

// Tensor data records (<root>/data/N): how many and their bytes.
void AddStorages(const std::vector<io::ZipMember>& members, const std::string& root, View& view) {
  size_t count = 0;
  uint64_t bytes = 0;
  for (const io::ZipMember& member : members) {
    if (member.name.rfind(root + "data/", 0) != 0) continue;
    ++count;
    bytes += member.size;
  }
  view.Add("tensor_records", {{"count", count}, {"bytes", bytes}}, "weights",
           Plural(count, "tensor record", "tensor records") + ", " +
               FormatBytes(static_cast<int64_t>(bytes)));
}

// Splits "a: T, b: Tuple[int, int]=(1, 2)" at the commas outside brackets.
std::vector<std::string> SplitArguments(std::string_view text) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back();
      continue;
    }
    if (c != '\n' && !(c == ' ' && parts.back().empty())) parts.back() += c;
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

struct Forward {
  std::string signature;                   // "forward(image: Tensor, scale: float=1.) -> Tensor"
  std::vector<std::string> tensor_inputs;  // names of the Tensor arguments, in order
};

// The text between forward('s parentheses in class `name`, and what follows them up to the
// colon (" -> Tensor"); nullopt when the code has no such method.
std::optional<std::pair<std::string_view, std::string_view>> ForwardText(std::string_view code,
                                                                         const std::string& name) {
  const size_t class_at = code.find("class " + name + "(");
  if (class_at == std::string_view::npos) return std::nullopt;
  const size_t def_at = code.find("def forward(", class_at);
  if (def_at == std::string_view::npos) return std::nullopt;
  const size_t open = def_at + std::string_view("def forward(").size();
  int depth = 1;
  size_t close = open;
  for (; close < code.size() && depth > 0; ++close) {
    if (code[close] == '(') ++depth;
    if (code[close] == ')') --depth;
  }
  if (depth != 0) return std::nullopt;
  const size_t colon = code.find(':', close);
  if (colon == std::string_view::npos) return std::nullopt;
  return std::make_pair(code.substr(open, close - 1 - open), code.substr(close, colon - close));
}

// forward() of class `name` in TorchScript's serialized code for it.
std::optional<Forward> ParseForward(std::string_view code, const std::string& name) {
  const auto text = ForwardText(code, name);
  if (!text) return std::nullopt;
  Forward forward;
  std::string arguments;
  for (const std::string& argument : SplitArguments(text->first)) {
    if (argument == "self" || argument.rfind("self:", 0) == 0) continue;
    arguments += (arguments.empty() ? "" : ", ") + argument;
    const size_t name_end = argument.find(':');
    const std::string type = name_end == std::string::npos ? "" : argument.substr(name_end + 1);
    if (type.find("Tensor") != std::string::npos) {
      forward.tensor_inputs.push_back(argument.substr(0, name_end));
    }
  }
  forward.signature = "forward(" + arguments + ")" + std::string(text->second);
  return forward;
}

// The archive's top-level module class and its forward(), from data.pkl and the code records.
std::optional<Forward> ReadTorchScriptForward(const fs::path& path, const std::string& root,
                                              View& view) {
  Result<std::string> data = io::ReadZipMember(path, root + "data.pkl", kMaxMemberBytes);
  if (!data.ok()) return std::nullopt;
  const std::optional<std::string> root_class = FirstPickleClass(*data);
  if (!root_class) return std::nullopt;
  const size_t dot = root_class->rfind('.');
  const std::string module = root_class->substr(0, dot);
  const std::string name = root_class->substr(dot + 1);
  std::string file = module;
  for (char& c : file) c = c == '.' ? '/' : c;
  Result<std::string> code =
      io::ReadZipMember(path, root + "code/" + file + ".py", kMaxMemberBytes);
  std::optional<Forward> forward;
  if (code.ok()) forward = ParseForward(*code, name);
  json module_json = {{"class", *root_class}};
  std::string text = *root_class;
  if (forward) {
    module_json["forward"] = forward->signature;
    text += ": " + forward->signature;
  }
  view.Add("module", module_json, "module", text);
  return forward;
}

void DescribeTorchScript(const fs::path& path, const io::SniffedFile& sniffed, View& view) {
  const std::string root = ZipRoot(sniffed.members);
  const std::optional<Forward> forward = ReadTorchScriptForward(path, root, view);
  AddStorages(sniffed.members, root, view);
  std::vector<std::string> inputs = forward ? forward->tensor_inputs : std::vector<std::string>{};
  if (inputs.empty()) inputs.push_back("NAME");
  std::string shapes, names;
  for (const std::string& input : inputs) {
    shapes += " --shape " + input + ":1x3x224x224";
    names += (names.empty() ? "" : ",") + input;
  }
  // The torch backend is the default only for .pt, .pth and .torchscript files.
  Result<std::string> by_extension = backends::DefaultBackendFor(path);
  const bool torch_default = by_extension.ok() && *by_extension == "torch";
  const std::string file = ShellWord(path.string());
  view.commands = {
      "convgate run " + file + (torch_default ? "" : " --backend torch") + shapes,
      "convgate compare " + file + " model.onnx" +
          (torch_default ? "" : " --source-backend torch") + shapes,
      "convgate convert " + file + " --to onnx -o " + ShellWord(path.stem().string() + ".onnx") +
          " --param input_shape=1x3x224x224" +
          (forward && !forward->tensor_inputs.empty() ? " --param input_names=" + names : "")};
  view.note =
      "TorchScript declares no shapes: give each input's real shape with --shape (1x3x224x224 "
      "above is a placeholder). It runs on the torch backend (libtorch)" +
      std::string(HasBackend("torch")
                      ? "."
                      : ", which this build lacks: it needs libtorch-dev at configure time.");
}

void DescribePyTorchZip(const fs::path& path, const io::SniffedFile& sniffed, View& view) {
  const std::string root = ZipRoot(sniffed.members);
  Result<std::string> data = io::ReadZipMember(path, root + "data.pkl", kMaxMemberBytes);
  DescribeRoot(data.ok() ? FirstPickleClass(*data) : std::nullopt, view);
  AddStorages(sniffed.members, root, view);
  view.note = kPickleNote;
}

void DescribeZip(const io::SniffedFile& sniffed, View& view) {
  json members = json::array();
  std::string listed;
  for (const io::ZipMember& member : sniffed.members) {
    members.push_back({{"name", member.name}, {"bytes", member.size}});
    if (members.size() <= kListedInText) listed += (listed.empty() ? "" : ", ") + member.name;
  }
  if (sniffed.members.size() > kListedInText) {
    listed += ", ... (" + std::to_string(sniffed.members.size() - kListedInText) + " more)";
  }
  view.Add("members", members, "members",
           Plural(sniffed.members.size(), "member", "members") + ": " + listed);
}

// --- safetensors --------------------------------------------------------------------------------

struct SafetensorsList {
  json tensors = json::array();
  int64_t parameters = 0;
  std::map<std::string, int64_t> dtypes;
  std::string text;  // the first kListedInText tensors, one per line
};

SafetensorsList ListSafetensors(const json& header) {
  SafetensorsList list;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__" || !info.is_object()) continue;
    const json shape = info.contains("shape") ? info["shape"] : json::array();
    const std::string dtype = JsonTextOr(info, "dtype", "?");
    int64_t elements = 1;
    std::string dims;
    for (const json& dim : shape) {
      elements *= dim.is_number_integer() ? dim.get<int64_t>() : 0;
      dims += (dims.empty() ? "" : ", ") + dim.dump();
    }
    list.parameters += elements;
    ++list.dtypes[dtype];
    list.tensors.push_back({{"name", name}, {"dtype", dtype}, {"shape", shape}});
    if (list.tensors.size() <= kListedInText) {
      list.text += "\n    " + name + "  " + dtype + "[" + dims + "]";
    }
  }
  if (list.tensors.size() > kListedInText) {
    list.text +=
        "\n    ... " + std::to_string(list.tensors.size() - kListedInText) + " more (--json)";
  }
  return list;
}

// The header lists the tensors; the whole file is also read (io/safetensors.h), so offsets that do
// not match dtype x shape, holes, overlaps or a truncated buffer fail here naming the tensor, and
// each tensor's values are summarized like an .npz member's.
Status DescribeSafetensors(const fs::path& path, const io::SniffedFile& sniffed, View& view) {
  const json header = json::parse(sniffed.safetensors_header, nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) {
    return Status::DataLoss(path.string() + ": a safetensors file whose header is not JSON");
  }
  CONVGATE_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(path));
  SafetensorsList list = ListSafetensors(header);
  // By name through an index: TensorMap::Find per tensor was quadratic (100k tensors: seconds).
  std::unordered_map<std::string_view, const Tensor*> read_by_name;
  read_by_name.reserve(file.tensors.size());
  for (const TensorMap::Entry& entry : file.tensors)
    read_by_name.emplace(entry.name, &entry.tensor);
  for (json& tensor : list.tensors) {
    const std::string& name = tensor["name"].get_ref<const std::string&>();
    if (auto read = read_by_name.find(name); read != read_by_name.end()) {
      tensor["stats"] = internal::TensorStatsJson(name, *read->second);
    }
  }
  std::string dtype_text;
  for (const auto& [dtype, count] : list.dtypes) {
    dtype_text += (dtype_text.empty() ? "" : ", ") + dtype + " x" + std::to_string(count);
  }
  view.doc["parameter_count"] = list.parameters;
  view.doc["dtypes"] = list.dtypes;
  if (header.contains("__metadata__")) view.doc["metadata"] = header["__metadata__"];
  view.Add("tensors", list.tensors, "tensors",
           Plural(list.tensors.size(), "tensor", "tensors") + ", " +
               std::to_string(list.parameters) + " parameters (" + dtype_text + ")" + list.text);
  view.note =
      "Weights only: there is no graph to run. Load them into the model in Python and export "
      "ONNX (torch.onnx.export) or TorchScript for convgate.";
  return Status::OK();
}

// --- OpenVINO IR --------------------------------------------------------------------------------

// The value of attribute `name` in the XML tag text `tag`; "" when absent.
std::string XmlAttribute(std::string_view tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string_view::npos) return "";
  const size_t start = at + key.size();
  const size_t end = tag.find('"', start);
  return end == std::string_view::npos ? "" : std::string(tag.substr(start, end - start));
}

// The <tag ...> starting at `at`, up to its '>'; empty when `at` is npos.
std::string_view TagAt(std::string_view xml, size_t at) {
  if (at >= xml.size()) return {};
  const size_t end = xml.find('>', at);
  return xml.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
}

// Every <layer>: the op histogram, and the Parameter layers as the model's inputs.
void AddLayers(std::string_view xml, View& view) {
  std::map<std::string, int64_t> ops;
  json inputs = json::array();
  std::string input_text;
  int64_t layers = 0;
  for (size_t at = xml.find("<layer "); at != std::string_view::npos;
       at = xml.find("<layer ", at + 1)) {
    const std::string_view layer = TagAt(xml, at);
    const std::string type = XmlAttribute(layer, "type");
    ++layers;
    ++ops[type];
    if (type != "Parameter") continue;
    const std::string_view data = TagAt(xml, xml.find("<data", at));
    const std::string name = XmlAttribute(layer, "name");
    const std::string shape = XmlAttribute(data, "shape");
    const std::string element = XmlAttribute(data, "element_type");
    inputs.push_back({{"name", name}, {"element_type", element}, {"shape", shape}});
    input_text += (input_text.empty() ? "" : ", ") + name + " " + element + "[" + shape + "]";
  }
  view.Add("inputs", inputs, "inputs", input_text.empty() ? "none found" : input_text);
  std::string op_text = std::to_string(layers) + " layers:";
  for (const auto& [op, count] : ops) op_text += " " + op + " x" + std::to_string(count);
  view.doc["layer_count"] = layers;
  view.Add("op_histogram", ops, "layers", op_text);
}

Status DescribeOpenVino(const fs::path& path, View& view) {
  CONVGATE_ASSIGN_OR_RETURN(std::string xml, ReadFile(path, kMaxTextFileBytes, "an XML file"));
  const std::string_view net = TagAt(xml, xml.find("<net"));
  const std::string name = XmlAttribute(net, "name");
  const std::string version = XmlAttribute(net, "version");
  view.Add("net", {{"name", name}, {"ir_version", version}}, "net",
           name + " (IR version " + version + ")");
  AddLayers(xml, view);
  fs::path weights = path;
  weights.replace_extension(".bin");
  std::error_code ec;
  const bool has_weights = fs::is_regular_file(weights, ec);
  view.Add("weights", has_weights ? json(weights.string()) : json(nullptr), "weights",
           has_weights ? weights.string() + " (" +
                             FormatBytes(static_cast<int64_t>(fs::file_size(weights, ec))) + ")"
                       : weights.string() + " is missing");
  const std::string file = ShellWord(path.string());
  if (HasBackend("openvino")) {
    view.commands = {"convgate run " + file, "convgate compare model.onnx " + file};
    view.note =
        "It runs on the openvino backend (OpenVINO's CPU plugin, from the venv that "
        "./scripts/setup.sh makes; CONVGATE_VENV). A dynamic dimension needs --shape for `run`.";
    return Status::OK();
  }
  view.commands = {"convgate run " + file + " --exec 'PROGRAM {model} {inputs} {outputs}'",
                   "convgate compare model.onnx " + file +
                       " --target-exec 'PROGRAM {model} {inputs} {outputs}'"};
  view.note =
      "This build has no openvino backend (CONVGATE_WITH_OPENVINO=OFF): the exec backend runs it "
      "through a program of yours that runs OpenVINO on {model}, reading {inputs} (.npz) and "
      "writing {outputs} (.npz).";
  return Status::OK();
}

// --- Hugging Face folders ------------------------------------------------------------------------

// What runs the folder: optimum-intel's OpenVINO export, optimum's ONNX export, or transformers.
struct HfKind {
  std::string key;  // "optimum-openvino", "optimum-onnx", "transformers"
  std::string text;
};

HfKind HfFolderKind(const fs::path& folder) {
  std::error_code ec;
  bool onnx = false;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("openvino_") && name.ends_with(".xml")) {
      return {"optimum-openvino",
              "an optimum-intel OpenVINO export (run by optimum.intel's OVModelFor* classes)"};
    }
    if (name.ends_with(".onnx")) onnx = true;
  }
  if (onnx) {
    return {"optimum-onnx",
            "an optimum ONNX export (run by optimum.onnxruntime's ORTModelFor* classes)"};
  }
  return {"transformers", "a transformers model (run by PyTorch)"};
}

// The folder's model files with their sizes, and the parameters the safetensors headers declare.
void AddHfFiles(const fs::path& folder, View& view) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file(ec) &&
        (ext == ".safetensors" || ext == ".bin" || ext == ".onnx" || ext == ".xml")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  json listed = json::array();
  std::string text;
  int64_t parameters = 0;
  for (const fs::path& file : files) {
    const auto bytes = static_cast<int64_t>(fs::file_size(file, ec));
    listed.push_back({{"name", file.filename().string()}, {"bytes", ec ? 0 : bytes}});
    text += (text.empty() ? "" : ", ") + file.filename().string() + " (" + FormatBytes(bytes) + ")";
    if (file.extension() != ".safetensors") continue;
    Result<io::SniffedFile> sniffed = io::SniffFile(file);
    if (!sniffed.ok()) continue;
    const json header = json::parse(sniffed->safetensors_header, nullptr, false);
    if (header.is_object()) parameters += ListSafetensors(header).parameters;
  }
  view.Add("files", listed, "files", text.empty() ? "no model files" : text);
  if (parameters > 0) {
    view.Add("parameter_count", parameters, "parameters",
             std::to_string(parameters) + " (safetensors headers)");
  }
  const bool tokenizer = fs::is_regular_file(folder / "tokenizer.json", ec);
  view.Add("tokenizer", tokenizer, "tokenizer",
           tokenizer ? "tokenizer.json" : "none (generated inputs; give text with --load-inputs)");
}

// A folder with config.json: what the verify-conversion gate reads from it (the task, by its
// rules) and how convgate takes it (the hf backend; Path A of verify).
Status DescribeHfFolder(const fs::path& folder, View& view) {
  const fs::path config_path = folder / "config.json";
  CONVGATE_ASSIGN_OR_RETURN(std::string text,
                            ReadFile(config_path, kMaxTextFileBytes, "a config.json"));
  const json config = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object()) {
    return Status::DataLoss(config_path.string() + ": not a JSON object");
  }
  view.doc["format"] = "hf-folder";
  view.doc["description"] = "a Hugging Face model folder";
  const HfKind kind = HfFolderKind(folder);
  view.Add("kind", kind.key, "kind", kind.text);
  const std::string model_type = JsonTextOr(config, "model_type", "");
  json architectures = config.contains("architectures") ? config["architectures"] : json::array();
  std::string arch_text;
  for (const json& arch : architectures) {
    if (arch.is_string()) arch_text += (arch_text.empty() ? "" : ", ") + arch.get<std::string>();
  }
  view.Add("model_type", model_type, "model",
           (model_type.empty() ? "(no model_type)" : model_type) +
               (arch_text.empty() ? "" : " (" + arch_text + ")"));
  view.doc["architectures"] = architectures;
  const std::optional<graph::DetectedTask> task = graph::ResolveHfTask(folder);
  if (task) {
    view.Add("task", {{"task", task->task}, {"evidence", task->evidence}}, "task",
             task->task + " (" + task->evidence + ")");
  }
  AddHfFiles(folder, view);
  const std::string word = ShellWord(folder.string());
  if (kind.key != "transformers") {
    view.commands = {"convgate run " + word, "convgate compare SOURCE_FOLDER " + word};
    view.note =
        "An export: it runs on the hf backend (optimum in the venv ./scripts/setup.sh makes); "
        "compare it with the transformers folder it was exported from (SOURCE_FOLDER), or let "
        "`convgate verify SOURCE_FOLDER` export and gate it in one step.";
    return Status::OK();
  }
  view.commands = {"convgate verify " + word, "convgate run " + word,
                   "convgate convert " + word + " --to optimum-onnx -o " +
                       ShellWord(folder.filename().string() + "-onnx")};
  view.note =
      "It runs on the hf backend (transformers and optimum in the venv ./scripts/setup.sh makes); "
      "verify with no --to exports it with optimum-cli to OpenVINO and gates the export against "
      "it (Path A).";
  return Status::OK();
}

// --- the rest -----------------------------------------------------------------------------------

// An external converter to ONNX for TensorFlow-family files, through convert --converter.
void AddTf2Onnx(const fs::path& path, const std::string& flag, View& view) {
  view.commands = {"convgate convert " + ShellWord(path.string()) +
                   " --converter 'python3 -m tf2onnx.convert " + flag +
                   " {src} --output {out}' -o " + ShellWord(path.stem().string() + ".onnx")};
  view.note =
      "convgate runs no TensorFlow or Keras model itself: convert it to ONNX with an external "
      "converter (tf2onnx above, if it is installed), or run it through the exec backend "
      "(`convgate run FILE --exec 'PROGRAM {model} {inputs} {outputs}'`).";
}

std::string FormatKey(io::FileFormat format) {
  static const std::map<io::FileFormat, std::string> kKeys = {
      {io::FileFormat::kDirectory, "directory"},
      {io::FileFormat::kTfSavedModel, "tf-saved-model"},
      {io::FileFormat::kTorchScript, "torchscript"},
      {io::FileFormat::kPyTorchZip, "pytorch-checkpoint"},
      {io::FileFormat::kPyTorchLegacy, "pytorch-legacy-checkpoint"},
      {io::FileFormat::kPickle, "pickle"},
      {io::FileFormat::kSafetensors, "safetensors"},
      {io::FileFormat::kOpenVinoXml, "openvino-ir"},
      {io::FileFormat::kKerasZip, "keras"},
      {io::FileFormat::kZip, "zip"},
      {io::FileFormat::kHdf5, "hdf5"},
      {io::FileFormat::kTfLite, "tflite"},
      {io::FileFormat::kGguf, "gguf"}};
  auto found = kKeys.find(format);
  return found == kKeys.end() ? "other" : found->second;
}

Status Describe(const fs::path& path, const io::SniffedFile& sniffed, View& view) {
  switch (sniffed.format) {
    case io::FileFormat::kTorchScript:
      DescribeTorchScript(path, sniffed, view);
      return Status::OK();
    case io::FileFormat::kPyTorchZip:
      DescribePyTorchZip(path, sniffed, view);
      return Status::OK();
    case io::FileFormat::kPyTorchLegacy:
      view.note = kPickleNote;
      return Status::OK();
    case io::FileFormat::kPickle:
      view.Add("pickle_protocol", sniffed.pickle_protocol, "protocol",
               std::to_string(sniffed.pickle_protocol));
      view.note = kPickleNote;
      return Status::OK();
    case io::FileFormat::kSafetensors:
      return DescribeSafetensors(path, sniffed, view);
    case io::FileFormat::kOpenVinoXml:
      return DescribeOpenVino(path, view);
    case io::FileFormat::kKerasZip:
    case io::FileFormat::kHdf5:
      AddTf2Onnx(path, "--keras", view);
      return Status::OK();
    case io::FileFormat::kTfLite:
      AddTf2Onnx(path, "--tflite", view);
      return Status::OK();
    case io::FileFormat::kTfSavedModel:
      AddTf2Onnx(path, "--saved-model", view);
      return Status::OK();
    case io::FileFormat::kGguf:
      view.note =
          "convgate has no GGUF backend: run it through the exec backend with a program that "
          "runs llama.cpp, or compare outputs saved as .npz.";
      return Status::OK();
    case io::FileFormat::kDirectory:
      if (std::error_code ec; fs::is_regular_file(path / "config.json", ec)) {
        return DescribeHfFolder(path, view);
      }
      break;
    case io::FileFormat::kZip:
      DescribeZip(sniffed, view);
      view.note = "Not a model format convgate knows.";
      return Status::OK();
    default:
      break;
  }
  return Status::InvalidArgument(
      path.string() + " is " + std::string(io::FileFormatName(sniffed.format)) +
      ", not a model, tensor file, Hugging Face model folder (config.json) or ONNX test case "
      "folder (test_data_set_N/input_K.pb)");
}

std::string ViewText(const fs::path& path, const io::SniffedFile& sniffed, const View& view) {
  std::string text = path.string() + "\n";
  auto line = [&text](const std::string& label, const std::string& value) {
    text +=
        "  " + label + std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') + value + "\n";
  };
  line("format", view.doc["description"].get<std::string>());
  if (sniffed.size > 0) line("size", FormatBytes(static_cast<int64_t>(sniffed.size)));
  for (const auto& [label, value] : view.lines) line(label, value);
  for (size_t idx = 0; idx < view.commands.size(); ++idx) {
    line(idx == 0 ? "use" : "", view.commands[idx]);
  }
  if (!view.note.empty()) line("note", view.note);
  return text;
}

}  // namespace

Result<Inspection> InspectOtherFormat(const fs::path& path, const io::SniffedFile& sniffed) {
  View view;
  view.doc = {{"schema_version", kInspectSchemaVersion},
              {"path", path.string()},
              {"format", FormatKey(sniffed.format)},
              {"description", io::FileFormatName(sniffed.format)}};
  if (sniffed.size > 0) view.doc["file_bytes"] = sniffed.size;
  CONVGATE_RETURN_IF_ERROR(Describe(path, sniffed, view));
  view.doc["commands"] = view.commands;
  view.doc["note"] = view.note.empty() ? json(nullptr) : json(view.note);
  return Inspection{view.doc, ViewText(path, sniffed, view)};
}

}  // namespace convgate::inspect::internal
