#include <chrono>
#include <cstdio>
#include <iostream>

#include "command.h"

namespace convgate::cli {
namespace {

const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

}  // namespace

double ProcessSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - kProcessStart).count();
}

int UsageError(const Status& status) {
  std::cerr << "convgate: " << status.message() << "\n"
            << "Run 'convgate --help' or 'convgate COMMAND --help' for usage.\n";
  return 2;
}

int Finish(const OutputFlags& flags, const Rendered& rendered) {
  int exit_code = rendered.exit_code;
  if (!flags.out_dir.empty()) {
    Status written = report::WriteResultFiles(flags.out_dir, rendered.report,
                                              rendered.verify_result, rendered.junit);
    if (!written.ok()) {
      std::cerr << "convgate: error (write): " << written.message() << "\n";
      if (exit_code < 3) exit_code = 3;
    }
  }
  if (flags.json) {
    std::cout << rendered.report.dump(2) << "\n";
  } else {
    std::cout << rendered.console;
    if (!flags.out_dir.empty()) std::cout << "results in " << flags.out_dir << "/\n";
  }
  std::cout.flush();
  if (rendered.error) std::cerr << "convgate: " << report::ErrorLine(*rendered.error) << "\n";
  return exit_code;
}

}  // namespace convgate::cli
