// The classifier-agreement flags of `compare`: --classifier, --agreement, --flip-margin, --top-k.
// Declared once here (STYLE.md section 7); validated before any model loads.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "convgate/compare/agreement_check.h"
#include "convgate/core/status.h"

namespace convgate::cli {

struct AgreementFlags {
  std::vector<std::string> classifiers;
  std::vector<std::string> checks;
  double flip_margin = 0.0;  // see compare::AgreementOptions::flip_margin
  int top_k = 5;             // see compare::AgreementOptions::top_k
};
void AddAgreementFlags(CLI::App& app, AgreementFlags& flags);
// InvalidArgument quoting the bad text: a malformed --agreement, an empty --classifier name.
Result<compare::AgreementConfig> ToAgreementConfig(const AgreementFlags& flags);

}  // namespace convgate::cli
