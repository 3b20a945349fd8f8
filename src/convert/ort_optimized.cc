// `--to ort-optimized:basic|extended|all`: the optimized model ONNX Runtime writes.
#include "convert/converter.h"
#include "convgate/backends/ort_optimize.h"

namespace convgate::convert {
namespace {

Result<backends::OrtOptimizationLevel> ParseLevel(std::string_view level) {
  if (level == "basic") return backends::OrtOptimizationLevel::kBasic;
  if (level == "extended") return backends::OrtOptimizationLevel::kExtended;
  if (level == "all") return backends::OrtOptimizationLevel::kAll;
  return Status::InvalidArgument("--to ort-optimized:" + std::string(level) +
                                 ": the level is basic, extended or all");
}

Result<std::vector<std::string>> Optimize(const std::filesystem::path& source,
                                          const std::filesystem::path& out,
                                          backends::OrtOptimizationLevel level) {
  // A source too large for one protobuf keeps its weights outside it; so must the optimized
  // model, in its own data file (the driver delivers it with the model).
  Result<bool> external = HasExternalData(source);
  if (!external.ok()) return Status::Unavailable(external.status().message());
  const std::string data_file = *external ? ExternalDataPath(out).filename().string() : "";
  Status written = backends::WriteOrtOptimizedModel(source, out, level, data_file);
  // ONNX Runtime calls a model it rejects an invalid argument; here that is a failed conversion,
  // not a bad request.
  if (!written.ok()) return Status::Unavailable(written.message());
  std::vector<std::string> notes;
  if (level == backends::OrtOptimizationLevel::kAll) {
    notes.push_back(
        "level 'all' may add layout transformations specific to this CPU (ONNX Runtime's "
        "warning): run the optimized model where it was made");
  }
  return notes;
}

}  // namespace

Result<Converter> MakeOrtOptimizedConverter(std::string_view level_text, const Params& params) {
  CONVGATE_ASSIGN_OR_RETURN(backends::OrtOptimizationLevel level, ParseLevel(level_text));
  Converter converter;
  converter.tool = "onnxruntime";
  converter.tool_version = backends::OrtRuntimeVersion();
  if (converter.tool_version.empty()) {
    return Status::NotFound(
        "--to ort-optimized needs ONNX Runtime, and this convgate was built without it "
        "(CONVGATE_WITH_ONNXRUNTIME=OFF)");
  }
  converter.display = "ONNX Runtime's graph optimizer (level " + std::string(level_text) + ")";
  converter.attempt = [level](const std::filesystem::path& source, const std::filesystem::path& out,
                              double timeout) {
    return RunBuiltinIsolated(
        [level](const std::filesystem::path& src, const std::filesystem::path& dst) {
          return Optimize(src, dst, level);
        },
        source, out, timeout);
  };
  return converter;
}

}  // namespace convgate::convert
