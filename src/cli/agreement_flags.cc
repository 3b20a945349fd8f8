#include "agreement_flags.h"

namespace convgate::cli {

void AddAgreementFlags(CLI::App& app, AgreementFlags& flags) {
  app.add_option("--classifier", flags.classifiers,
                 "Treat output NAME as a classifier output (repeatable): floating = class scores "
                 "on the last axis, integer = labels. Outputs named like logits/prob/score/label "
                 "are detected anyway; detection only reports agreement");
  app.add_option("--agreement", flags.checks,
                 "Gate on classifier agreement (repeatable): NAME:top1>=0.999, NAME:top5>=1, "
                 "NAME:flip_rate<=0, NAME:flips==0, NAME:diagonal (confusion matrix of source vs "
                 "target labels must be diagonal)");
  app.add_option("--flip-margin", flags.flip_margin,
                 "A row counts toward flips only when the source's top-1 score leads its "
                 "runner-up by more than this (default 0: every row without a source tie)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", flags.top_k,
                 "The k of the reported top-k agreement (default 5); checks may name any k")
      ->check(CLI::Range(1, 1000000));
}

Result<compare::AgreementConfig> ToAgreementConfig(const AgreementFlags& flags) {
  compare::AgreementConfig config;
  for (const std::string& name : flags.classifiers) {
    if (name.empty()) return Status::InvalidArgument("--classifier: the output name is empty");
    config.classifiers.push_back(name);
  }
  for (const std::string& text : flags.checks) {
    Result<compare::AgreementCheck> check = compare::ParseAgreementCheck(text);
    if (!check.ok()) return check.status().WithContext("--agreement");
    config.checks.push_back(std::move(check).value());
  }
  config.options.flip_margin = flags.flip_margin;
  config.options.top_k = {flags.top_k};
  config.AddCheckedK();
  return config;
}

}  // namespace convgate::cli
