// Pieces shared by the inspect views (internal to src/report).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"
#include "convgate/inspect/inspect.h"
#include "convgate/io/file_format.h"

namespace convgate::inspect::internal {

// {"name", "dtype", "shape", "min", "max", "mean", "nan", "inf"}.
nlohmann::json TensorStatsJson(const std::string& name, const Tensor& tensor);

// "name  float32[1, 3]  min 0  max 1  mean 0.5  NaN 0  Inf 0" from TensorStatsJson.
std::string TensorStatsText(const nlohmann::json& stats);

// A model format inspect recognizes but does not read as ONNX (TorchScript, PyTorch checkpoints,
// pickles, safetensors, OpenVINO IR, ...): what it is, what can be read from it safely, and the
// convgate command that takes it (formats.cc).
Result<Inspection> InspectOtherFormat(const std::filesystem::path& path,
                                      const io::SniffedFile& sniffed);

}  // namespace convgate::inspect::internal
