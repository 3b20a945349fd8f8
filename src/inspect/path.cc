// InspectPath: tells what a path is and dispatches to the view for it; the ONNX model, tensor file
// and test case views live here, other model formats in formats.cc.
#include <optional>

#include "convgate/compare/tensor_compare.h"
#include "convgate/core/numbers.h"
#include "convgate/graph/onnx_model.h"
#include "convgate/graph/task.h"
#include "convgate/inspect/model_file.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/tensor_proto.h"
#include "convgate/io/test_case.h"
#include "convgate/version.h"
#include "inspect/internal.h"

namespace convgate::inspect {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

constexpr int kInspectSchemaVersion = 1;

json ModelJson(const graph::ModelSummary& summary) {
  const std::optional<graph::DetectedTask> task =
      graph::DetectTask(summary.signature, summary.op_histogram);
  json out = ModelSummaryJson(summary);
  out["task"] = task ? json{{"task", task->task}, {"evidence", task->evidence}} : json(nullptr);
  out["tool"] = {{"name", "convgate"}, {"version", kVersion}, {"commit", kBuildCommit}};
  return out;
}

std::string ModelText(const json& model, const graph::ModelSummary& summary) {
  const json& task = model["task"];
  return ModelSummaryText(summary) + "  task: " +
         (task.is_null() ? std::string("not detected")
                         : task["task"].get<std::string>() + " (" +
                               task["evidence"].get<std::string>() + ")") +
         "\n";
}

Result<Inspection> InspectOnnx(const fs::path& path) {
  Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(path);
  if (!summary.ok()) {
    const std::string message = summary.status().message();
    if (message.find("does not start like an ONNX model") == std::string::npos) {
      return summary.status();
    }
    return Status::DataLoss(message +
                            "; inspect reads ONNX models, .npy/.npz tensors and ONNX test case "
                            "folders, and recognizes TorchScript, PyTorch, pickle, safetensors, "
                            "OpenVINO IR, Keras, TFLite and GGUF files");
  }
  Inspection inspection;
  inspection.json = ModelJson(*summary);
  inspection.text = ModelText(inspection.json, *summary);
  return inspection;
}

json TensorListJson(const TensorMap& tensors) {
  json list = json::array();
  for (const TensorMap::Entry& entry : tensors) {
    list.push_back(internal::TensorStatsJson(entry.name, entry.tensor));
  }
  return list;
}

Result<Inspection> InspectTensors(const fs::path& path, io::FileFormat format,
                                  const Limits& limits) {
  TensorMap tensors;
  if (format == io::FileFormat::kNpz) {
    CONVGATE_ASSIGN_OR_RETURN(tensors, io::ReadNpz(path, limits));
  } else {
    CONVGATE_ASSIGN_OR_RETURN(Tensor tensor, io::ReadNpy(path, limits));
    tensors.InsertOrAssign(path.stem().string(), std::move(tensor));
  }
  Inspection inspection;
  inspection.json = {{"schema_version", kInspectSchemaVersion},
                     {"path", path.string()},
                     {"format", "tensors"},
                     {"tensors", TensorListJson(tensors)}};
  inspection.text = path.string() + "\n";
  for (const json& tensor : inspection.json["tensors"]) {
    inspection.text += "  " + internal::TensorStatsText(tensor) + "\n";
  }
  return inspection;
}

// ONNX 1.12 writes bfloat16 test data as UINT16 TensorProtos: where the model declares bfloat16
// and the file holds uint16, the bits are bfloat16 (as compare reads them).
void ApplyBFloat16Quirk(TensorMap& tensors, const std::vector<TensorInfo>& declared) {
  for (const TensorInfo& info : declared) {
    Tensor* tensor = tensors.Find(info.name);
    if (tensor == nullptr || info.dtype != DType::kBFloat16 || tensor->dtype() != DType::kUInt16) {
      continue;
    }
    Result<Tensor> reinterpreted = io::ReinterpretAs(std::move(*tensor), DType::kBFloat16);
    if (reinterpreted.ok()) *tensor = std::move(reinterpreted).value();
  }
}

struct CaseModel {
  std::optional<graph::ModelSummary> summary;
  std::string error;  // why model.onnx beside the data sets could not be read
};

CaseModel ReadCaseModel(const fs::path& path) {
  CaseModel model;
  const fs::path model_path = io::TestCaseModelPath(path);
  if (model_path.empty()) return model;
  Result<graph::ModelSummary> summary = graph::SummarizeOnnxModel(model_path);
  if (summary.ok()) {
    model.summary = std::move(summary).value();
  } else {
    model.error = summary.status().message();
  }
  return model;
}

std::string DataSetsText(const json& data_sets) {
  std::string text;
  for (const json& data_set : data_sets) {
    text += "  " + fs::path(data_set["path"].get<std::string>()).filename().string() + "\n";
    for (const char* side : {"inputs", "outputs"}) {
      for (const json& tensor : data_set[side]) {
        text += std::string("    ") + (side[0] == 'i' ? "input   " : "output  ") +
                internal::TensorStatsText(tensor) + "\n";
      }
    }
  }
  return text;
}

// A test case folder or one test_data_set_N: each data set's tensors, named after the model's
// inputs and outputs by position when model.onnx is there, and the model's summary.
Result<Inspection> InspectTestCase(const fs::path& path, io::FileFormat format,
                                   const Limits& limits) {
  const CaseModel model = ReadCaseModel(path);
  io::TestCaseNames names;
  if (model.summary) {
    for (const TensorInfo& info : model.summary->signature.inputs)
      names.inputs.push_back(info.name);
    for (const TensorInfo& info : model.summary->signature.outputs) {
      names.outputs.push_back(info.name);
    }
  }
  CONVGATE_ASSIGN_OR_RETURN(std::vector<io::TestDataSet> sets,
                            io::ReadTestCase(path, names, /*load_outputs=*/true, limits));
  json data_sets = json::array();
  for (io::TestDataSet& set : sets) {
    if (model.summary) {
      ApplyBFloat16Quirk(set.inputs, model.summary->signature.inputs);
      ApplyBFloat16Quirk(set.outputs, model.summary->signature.outputs);
    }
    data_sets.push_back({{"path", set.dir.string()},
                         {"inputs", TensorListJson(set.inputs)},
                         {"outputs", TensorListJson(set.outputs)}});
  }
  const bool one_set = format == io::FileFormat::kOnnxTestDataSet;
  Inspection inspection;
  inspection.json = {{"schema_version", kInspectSchemaVersion},
                     {"path", path.string()},
                     {"format", one_set ? "onnx-test-data-set" : "onnx-test-case"},
                     {"model", model.summary ? ModelJson(*model.summary) : json(nullptr)},
                     {"data_sets", data_sets}};
  if (!model.error.empty()) inspection.json["model_error"] = model.error;
  inspection.text = path.string() + ": " + std::string(io::FileFormatName(format)) + " (" +
                    std::to_string(sets.size()) + (sets.size() == 1 ? " data set" : " data sets") +
                    (model.summary ? ", with its model" : "") + ")\n";
  if (!model.error.empty()) inspection.text += "  model: " + model.error + "\n";
  inspection.text += DataSetsText(data_sets);
  if (model.summary) {
    inspection.text += "\nmodel " + ModelText(inspection.json["model"], *model.summary);
  }
  return inspection;
}

Result<Inspection> InspectSniffed(const fs::path& path, const io::SniffedFile& sniffed,
                                  const Limits& limits) {
  switch (sniffed.format) {
    case io::FileFormat::kOther:
      return InspectOnnx(path);
    case io::FileFormat::kEmpty:
      return Status::DataLoss(path.string() + ": the file is empty");
    case io::FileFormat::kNpy:
    case io::FileFormat::kNpz:
      return InspectTensors(path, sniffed.format, limits);
    case io::FileFormat::kOnnxTestCase:
    case io::FileFormat::kOnnxTestDataSet:
      return InspectTestCase(path, sniffed.format, limits);
    default:
      return internal::InspectOtherFormat(path, sniffed);
  }
}

}  // namespace

namespace internal {

json TensorStatsJson(const std::string& name, const Tensor& tensor) {
  const compare::ValueSummary values = compare::SummarizeValues(tensor);
  return {{"name", name},
          {"dtype", DTypeName(tensor.dtype())},
          {"shape", tensor.shape().dims()},
          {"min", values.min},
          {"max", values.max},
          {"mean", values.mean},
          {"nan", values.nan},
          {"inf", values.pos_inf + values.neg_inf}};
}

// Values at 6 significant digits (the JSON keeps every digit): a float32's 0.3 is 0.3 here, not
// the 0.30000001192092896 its double reads back as.
std::string TensorStatsText(const json& stats) {
  const auto value = [](const json& number) {
    return number.is_number() ? FormatSignificant(number.get<double>()) : number.dump();
  };
  return stats["name"].get<std::string>() + "  " + stats["dtype"].get<std::string>() +
         FormatIndex(stats["shape"].get<std::vector<int64_t>>()) + "  min " + value(stats["min"]) +
         "  max " + value(stats["max"]) + "  mean " + value(stats["mean"]) + "  NaN " +
         stats["nan"].dump() + "  Inf " + stats["inf"].dump();
}

}  // namespace internal

Result<Inspection> InspectPath(const fs::path& path, const Limits& limits) {
  CONVGATE_ASSIGN_OR_RETURN(io::SniffedFile sniffed, io::SniffFile(path));
  Result<Inspection> inspection = InspectSniffed(path, sniffed, limits);
  std::error_code ec;
  if (!inspection.ok() || !fs::is_regular_file(path, ec)) return inspection;
  // The model file verification step on the file itself (external data, a whole parse).
  const ModelFileCheck check = VerifyModelFile(path, limits);
  inspection->json["verification"] = ModelFileCheckJson(check);
  inspection->text += ModelFileCheckText(check);
  return inspection;
}

}  // namespace convgate::inspect
