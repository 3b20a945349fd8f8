// What the in-process OpenVINO backend and its IR writer share: OpenVINO's messages made readable,
// its element types in convgate's terms, and the names convgate gives its ports. Only
// src/backends/openvino/ includes OpenVINO's headers (docs/architecture.md rule 2).
#pragma once

#include <filesystem>
#include <memory>
#include <openvino/openvino.hpp>
#include <optional>
#include <string>

#include "convgate/core/dtype.h"
#include "convgate/core/signature.h"
#include "convgate/core/status.h"

namespace convgate::backends {

// The one ov::Core of the process: creating one reads the plugin registry (~10 ms) and each keeps
// its own compiled-model cache, so every model loaded in this process shares it.
ov::Core& SharedCore();

// Core::read_model of `path` through SharedCore: DataLoss naming the file with OpenVINO's message,
// Unimplemented for an operator it cannot convert.
Result<std::shared_ptr<ov::Model>> ReadOpenVinoModel(const std::filesystem::path& path);

// OpenVINO's message without its source locations ("Exception from src/...:" and "Check 'x'
// failed at src/..." lines), which say where in OpenVINO, not what is wrong with the model; the
// lines that remain joined by spaces.
std::string CleanMessage(const std::string& what);

// convgate's dtype of an OpenVINO element type; nullopt for those convgate cannot hold (f8, i4,
// nf4, ...), whose OpenVINO name ElementTypeName gives.
std::optional<DType> ElementDType(const ov::element::Type& type);
ov::element::Type DTypeElement(DType dtype);
std::string ElementTypeName(const ov::element::Type& type);

// How convgate names a model's port: an input by its Parameter's friendly name when that is one
// of its tensor names (a Parameter that is also an output holds both names), else any tensor
// name, else the producing node's friendly name, else "input_N"/"output_N".
std::string PortName(const ov::Output<const ov::Node>& port, size_t index, bool input);

// The model's inputs and outputs as convgate declares them: dynamic dims Unknown (OpenVINO keeps
// no dimension symbols), a dynamic rank as no shape.
Signature DescribeModel(const ov::Model& model);

}  // namespace convgate::backends
