#include "cli/command.h"

namespace convgate::cli {

std::vector<std::unique_ptr<Command>> MakeCommands() {
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(MakeInspectCommand());
  commands.push_back(MakeRunCommand());
  commands.push_back(MakeCompareCommand());
  commands.push_back(MakeVerifyCommand());
  commands.push_back(MakeCheckCommand());
  commands.push_back(MakeReportCommand());
  commands.push_back(MakeConvertCommand());
  commands.push_back(MakeCacheCommand());
  commands.push_back(MakeTransformCommand());
  commands.push_back(MakeReduceCommand());
  commands.push_back(MakeRepairCommand());
  commands.push_back(MakeBenchCommand());
  commands.push_back(MakePipelineCommand());
  commands.push_back(MakeBatchCommand());
  commands.push_back(MakeHistoryCommand());
  commands.push_back(MakeFetchCommand());
  commands.push_back(MakeDocsCommand());
  return commands;
}

}  // namespace convgate::cli
