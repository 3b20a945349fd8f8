// Where the project's Python environment is (internal to src/convert): the one virtual environment
// scripts/setup.sh creates from scripts/python-requirements.txt (openvino, optimum, optimum-intel,
// optimum-onnx, transformers, torch 2.x). The same lookup as the openvino backend's; one of the
// two goes when both are merged into src/core.
#pragma once

#include <filesystem>
#include <string>

#include "convgate/core/status.h"

namespace convgate::convert {

// $CONVGATE_VENV, else ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv. It need not exist.
std::filesystem::path PythonVenvDir();

// PythonVenvDir()/bin/`program` ("python", "optimum-cli"), or NotFound saying how to create it.
Result<std::filesystem::path> PythonVenvProgram(const std::string& program);

}  // namespace convgate::convert
