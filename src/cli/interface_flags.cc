// The interface group: how a target whose inputs and outputs differ from the source's
// corresponds to it (session/interface.h).
#include "cli/flag_groups.h"

namespace convgate::cli {
namespace {

// "a,b" appended to `names`; an empty name is refused.
Status AddNames(const std::string& value, std::vector<std::string>& names) {
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    const std::string name =
        value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) return Status::InvalidArgument("'" + value + "' holds an empty name");
    names.push_back(name);
    if (comma == std::string::npos) return Status::OK();
    start = comma + 1;
  }
}

}  // namespace

void AddInterfaceFlags(FlagSet& flags, session::InterfaceOptions& options) {
  flags.SetGroup("Interface");
  flags.Add({
      Flag{.name = "--map",
           .value_name = "SOURCE_NAME=TARGET_NAME",
           .help = "An input or output of the source and the target's name for it (repeatable). "
                   "Without it, names bind as they are, then ignoring a ':0' suffix, then by "
                   "position when both sides have as many with equal shapes; the report says "
                   "which",
           .examples = {"x=input.1", "logits=Identity:0"},
           .arity = FlagArity::kRepeated,
           .apply = [&options](
                        const std::string& value) { return session::AddMapping(value, options); }},
      Flag{.name = "--target-layout",
           .value_name = "nhwc|NAME:nhwc",
           .help = "The target keeps 4-D tensors in NHWC where the source has NCHW (onnx2tf, "
                   "TensorFlow): inputs are transposed for it and its outputs back; NAME (the "
                   "source's) for one tensor (repeatable)",
           .examples = {"nhwc", "images:nhwc"},
           .arity = FlagArity::kRepeated,
           .apply =
               [&options](const std::string& value) {
                 return session::AddTargetLayout(value, options);
               }},
      Flag{.name = "--outputs",
           .value_name = "NAME,...",
           .help = "Compare only these outputs (the source's names; repeatable)",
           .examples = {"logits", "boxes,scores"},
           .arity = FlagArity::kRepeated,
           .apply =
               [&options](const std::string& value) { return AddNames(value, options.outputs); }},
      Flag{.name = "--exclude-outputs",
           .value_name = "NAME,...",
           .help = "Do not compare these outputs (the source's names; repeatable), e.g. a "
                   "timestamp or an argmax whose ties a converter may break differently",
           .examples = {"debug_map"},
           .arity = FlagArity::kRepeated,
           .apply =
               [&options](const std::string& value) {
                 return AddNames(value, options.exclude_outputs);
               }},
  });
}

}  // namespace convgate::cli
