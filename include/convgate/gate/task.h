// Task detection lives in graph (convgate/graph/task.h): it reads only what a model declares. These
// names keep gate::DetectedTask and gate::DetectTask for src/report, which another branch is
// rewriting; drop this header once report includes convgate/graph/task.h.
#pragma once

#include "convgate/graph/task.h"

namespace convgate::gate {

using graph::DetectedTask;
using graph::DetectTask;

}  // namespace convgate::gate
