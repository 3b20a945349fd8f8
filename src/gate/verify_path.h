// Step 1 of OpenVINO's verify-conversion gate: the conversion a source gets when verify is not
// told one (`--to auto`, or no --to, --target or --converter). A Hugging Face model folder goes
// Path A (optimum-cli export openvino, the task from its config); an .onnx, TorchScript
// (.pt/.pth/.ts/.torchscript) or TensorFlow (.pb, a SavedModel folder) file goes Path B
// (openvino: convert_model, or ovc for TensorFlow). What cannot be told apart tries A, then B.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace convgate::gate::internal {

struct PathStep {
  std::string kind;  // a conversion kind of convert/kinds.h
  std::string why;   // "a Hugging Face model folder (config.json): Path A"
};

// The conversions to try in order. optimum_supported false (a context file's) leaves Path A out.
// A declared `model_type` decides whether a folder's model generates (graph::ResolveHfTask).
std::vector<PathStep> ChooseVerifyPaths(const std::filesystem::path& source,
                                        std::optional<bool> optimum_supported,
                                        std::string_view model_type = {});

}  // namespace convgate::gate::internal
