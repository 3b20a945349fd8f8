// The project's one Python virtual environment (scripts/setup.sh creates it from
// scripts/python-requirements.txt): OpenVINO, optimum, transformers and the other Python-side
// tools. convgate finds it through one setting:
//   CONVGATE_VENV   the venv folder; default ${CONVGATE_DEPS:-$HOME/.cache/convgate-deps}/venv,
//                   where scripts/setup.sh puts it.
// Everything that runs Python from the venv (the openvino backend's runner, conversions) asks
// here, so the setting and the message when it is missing are the same everywhere.
#pragma once

#include <filesystem>

#include "convgate/core/status.h"

namespace convgate {

// The venv folder the setting names (whether or not it exists).
std::filesystem::path VenvFolder();

// <venv>/bin/python. NotFound naming the folder, the setting and "run ./scripts/setup.sh" when it
// is not an executable file.
Result<std::filesystem::path> VenvPython();

}  // namespace convgate
