// `--to fp16` and `--to bf16`: the half-precision conversion of fp16.cc as a converter.
#include <optional>

#include "convert/converter.h"
#include "convert/fp16.h"
#include "convgate/core/file_util.h"
#include "convgate/core/units.h"
#include "convgate/graph/internal/external_data.h"
#include "convgate/graph/internal/model_proto.h"
#include "convgate/version.h"

namespace convgate::convert {
namespace {

// Part of the tool version, hence of the cache key: bump it whenever fp16.cc would write a
// different model for the same input and parameters, so stale cached results are not reused.
constexpr int kFp16Revision = 2;  // 2: chains of blocked nodes stay float32 between them

Result<std::vector<std::string>> ConvertFile(const std::filesystem::path& source,
                                             const std::filesystem::path& out,
                                             const Fp16Options& options) {
  CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadModelBytes(source));
  CONVGATE_ASSIGN_OR_RETURN(onnx::ModelProto model, graph::ParseModelProto(bytes, source));
  bytes.clear();
  bytes.shrink_to_fit();
  // Weights in a data file are read, converted and written to the output's own data file one
  // tensor at a time; what the conversion leaves float32 is copied across afterwards.
  std::optional<graph::ExternalDataWriter> writer;
  Fp16Options run = options;
  if (graph::HasExternalTensors(model)) {
    CONVGATE_RETURN_IF_ERROR(graph::AnchorExternalData(model, source));
    Result<graph::ExternalDataWriter> created =
        graph::ExternalDataWriter::Create(ExternalDataPath(out));
    if (!created.ok()) return created.status();
    writer.emplace(std::move(created).value());
    run.converted_sink = [&writer](onnx::TensorProto& tensor) { return writer->Place(tensor); };
  }
  Result<Fp16Report> report = ConvertModelToFloat16(model, run);
  if (!report.ok()) return report.status().WithContext(source.string());
  if (writer) {
    CONVGATE_RETURN_IF_ERROR(graph::PlaceExternalData(model, *writer));
    CONVGATE_RETURN_IF_ERROR(writer->Commit());
    report->notes.push_back("the weights are external data, as in the source: " +
                            FormatBytes(writer->bytes()) + " written one tensor at a time");
  }
  CONVGATE_RETURN_IF_ERROR(WriteFileAtomic(out, model.SerializeAsString()));
  return std::move(report->notes);
}

}  // namespace

Result<Converter> MakeFp16Converter(const Params& params, int32_t half_type) {
  CONVGATE_ASSIGN_OR_RETURN(Fp16Options options, ParseFp16Params(params, half_type));
  const bool bf16 = half_type == onnx::TensorProto::BFLOAT16;
  Converter converter;
  converter.tool = bf16 ? "convgate bf16" : "convgate fp16";
  converter.tool_version =
      std::string(kVersion) + " (fp16 revision " + std::to_string(kFp16Revision) + ")";
  converter.display = std::string("convgate's ") + HalfTypeName(half_type) + " conversion";
  converter.attempt = [options](const std::filesystem::path& source,
                                const std::filesystem::path& out, double timeout) {
    return RunBuiltinIsolated(
        [&options](const std::filesystem::path& src, const std::filesystem::path& dst) {
          return ConvertFile(src, dst, options);
        },
        source, out, timeout);
  };
  return converter;
}

}  // namespace convgate::convert
