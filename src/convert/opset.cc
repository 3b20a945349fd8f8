// `--to opset:N`: onnx's version converter (ONNX 1.12 in Debian 12 reaches opset 17).
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <map>

#include "convert/converter.h"
#include "convgate/core/file_util.h"
#include "convgate/graph/internal/external_data.h"
#include "convgate/graph/internal/model_proto.h"

namespace convgate::convert {
namespace {

// The highest default-domain opset this libonnx knows, which is as far as its converter goes.
int MaxOpset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto found = ranges.find(onnx::ONNX_DOMAIN);
  return found == ranges.end() ? 0 : found->second.second;
}

// The IR version each opset shipped with (onnx/helper.py VERSION_TABLE): a model converted to a
// newer opset must declare at least that IR version.
int64_t MinIrVersionFor(int64_t opset) {
  if (opset >= 15) return 8;
  if (opset >= 12) return 7;
  if (opset == 11) return 6;
  if (opset == 10) return 5;
  if (opset == 9) return 4;
  return 3;
}

Result<int64_t> DefaultDomainOpset(const onnx::ModelProto& model,
                                   const std::filesystem::path& path) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return Status::InvalidArgument(path.string() + " imports no opset of the default ONNX domain");
}

// onnx's IR (which the version converter works on) drops where an initializer's data lives, so
// the large external initializers of the main graph are set aside by name around the conversion
// (their data never read), and the rest of the external tensors, small or in subgraphs, are read
// into the model: an adapter may need their values.
class ExternalStash {
 public:
  static constexpr int64_t kSetAsideFrom = int64_t{64} << 10;

  // REQUIRES: the model's external data anchored (graph::AnchorExternalData).
  Status Take(onnx::ModelProto& model) {
    for (onnx::TensorProto& tensor : *model.mutable_graph()->mutable_initializer()) {
      if (tensor.data_location() != onnx::TensorProto::EXTERNAL) continue;
      CONVGATE_ASSIGN_OR_RETURN(int64_t bytes, graph::ExternalLength(tensor));
      if (bytes >= kSetAsideFrom) set_aside_.emplace(tensor.name(), tensor);
    }
    return graph::ForEachTensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
      return set_aside_.count(tensor.name()) != 0 ? Status::OK() : graph::LoadExternalData(tensor);
    });
  }

  // Puts the set-aside data back into the converted model's initializers of the same name (each
  // checked to have kept its dtype and dims).
  Status Restore(onnx::ModelProto& converted) const {
    for (onnx::TensorProto& tensor : *converted.mutable_graph()->mutable_initializer()) {
      auto found = set_aside_.find(tensor.name());
      if (found == set_aside_.end()) continue;
      const onnx::TensorProto& before = found->second;
      if (tensor.data_type() != before.data_type() ||
          !std::equal(tensor.dims().begin(), tensor.dims().end(), before.dims().begin(),
                      before.dims().end())) {
        return Status::Unimplemented(
            "the version converter changed the type or shape of initializer '" + tensor.name() +
            "', which is external data: convert it with its weights inside the model");
      }
      tensor = before;
    }
    return Status::OK();
  }

 private:
  std::map<std::string, onnx::TensorProto> set_aside_;
};

Result<std::vector<std::string>> ConvertOpset(const std::filesystem::path& source,
                                              const std::filesystem::path& out, int target) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(source));
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::ParseModelProto(bytes, source));
  const bool external = graph::HasExternalTensors(model);
  ExternalStash stash;
  if (external) {
    CONVGATE_RETURN_IF_ERROR(graph::AnchorExternalData(model, source));
    CONVGATE_RETURN_IF_ERROR(stash.Take(model));
  }
  CONVGATE_ASSIGN_OR_RETURN(int64_t current, DefaultDomainOpset(model, source));
  if (current == target) {
    CONVGATE_RETURN_IF_ERROR(
        external ? graph::WriteModelWithExternalData(model, out, ExternalDataPath(out))
                 : WriteFileAtomic(out, bytes));
    return std::vector<std::string>{"the source is at opset " + std::to_string(target) +
                                    " already: copied unchanged"};
  }
  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(model, target);
  } catch (const std::exception& error) {
    return Status::Unimplemented("onnx's version converter cannot take " + source.string() +
                                 " from opset " + std::to_string(current) + " to " +
                                 std::to_string(target) + ": " + error.what());
  }
  std::vector<std::string> notes = {"opset " + std::to_string(current) + " -> " +
                                    std::to_string(target)};
  if (converted.ir_version() < MinIrVersionFor(target)) {
    notes.push_back("IR version " + std::to_string(converted.ir_version()) + " -> " +
                    std::to_string(MinIrVersionFor(target)) + " (opset " + std::to_string(target) +
                    " needs it)");
    converted.set_ir_version(MinIrVersionFor(target));
  }
  if (!external) {
    CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(out, converted.SerializeAsString()));
    return notes;
  }
  CONVGATE_RETURN_IF_ERROR(stash.Restore(converted).WithContext(source.string()));
  CONVGATE_RETURN_IF_ERROR(
      graph::WriteModelWithExternalData(converted, out, ExternalDataPath(out)));
  return notes;
}

}  // namespace

Result<Converter> MakeOpsetConverter(std::string_view target_text, const Params& params) {
  int target = 0;
  auto [end, error] =
      std::from_chars(target_text.data(), target_text.data() + target_text.size(), target);
  if (error != std::errc() || end != target_text.data() + target_text.size()) {
    return Status::InvalidArgument("--to opset:" + std::string(target_text) +
                                   ": expected an opset number, e.g. opset:17");
  }
  const int max_opset = MaxOpset();
  if (target < 1 || target > max_opset) {
    return Status::InvalidArgument(
        "--to opset:" + std::to_string(target) + ": onnx " + onnx::LAST_RELEASE_VERSION +
        "'s version converter reaches opsets 1 to " + std::to_string(max_opset) +
        " of the default domain; opset " + std::to_string(target) + " is out of its reach");
  }
  Converter converter;
  converter.tool = "onnx version converter";
  converter.tool_version = onnx::LAST_RELEASE_VERSION;
  converter.display = "onnx version converter (opset " + std::to_string(target) + ")";
  converter.attempt = [target](const std::filesystem::path& source,
                               const std::filesystem::path& out, double timeout) {
    return RunBuiltinIsolated(
        [target](const std::filesystem::path& src, const std::filesystem::path& dst) {
          return ConvertOpset(src, dst, target);
        },
        source, out, timeout);
  };
  return converter;
}

}  // namespace convgate::convert
