// gate SOURCE TARGET: compares two models in-process; gate SOURCE --to KIND: verifies a conversion.
#include <convgate/convgate.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 2;
  convgate::v1::Outcome outcome;
  if (argc == 4 && std::string(argv[2]) == "--to") {
    outcome = convgate::v1::Verify({.source = argv[1], .to = argv[3]});
  } else {
    outcome = convgate::v1::Compare({.source = argv[1], .target = argv[2]});
  }
  for (const convgate::v1::Check& check : outcome.checks) {
    std::cout << check.output << " " << (check.passed ? "pass" : "FAIL") << "\n";
  }
  std::cout << "convgate " << convgate::v1::Version() << ": " << outcome.verdict << "\n";
  return outcome.exit_code;
}
