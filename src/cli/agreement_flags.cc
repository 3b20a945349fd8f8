// The classifier-agreement group: which outputs are classifier outputs, and the checks that gate.
#include "cli/flag_groups.h"
#include "convgate/core/numbers.h"

namespace convgate::cli {

void AddAgreementFlags(FlagSet& flags, compare::AgreementConfig& config) {
  flags.SetGroup("Classifier agreement");
  const compare::AgreementOptions defaults;
  flags.Add({
      Flag{.name = "--classifier",
           .value_name = "NAME",
           .help = "Treat output NAME as a classifier output (repeatable): floating = class "
                   "scores on the last axis, integer = labels. Outputs named like "
                   "logits/prob/score/label are detected anyway; detection only reports",
           .examples = {"logits"},
           .arity = FlagArity::kRepeated,
           .apply = [&config](const std::string& value) -> Status {
             if (value.empty()) return Status::InvalidArgument("the output name is empty");
             config.classifiers.push_back(value);
             return Status::OK();
           }},
      Flag{.name = "--agreement",
           .value_name = "NAME:METRIC OP VALUE",
           .help = "Gate on classifier agreement (repeatable; quote it, > redirects): metrics "
                   "top<K>, flip_rate, flips, diagonal",
           .examples = {"logits:top1>=0.999", "logits:top5>=1", "label:flip_rate<=0",
                        "probs:flips==0", "label:diagonal"},
           .arity = FlagArity::kRepeated,
           .apply = [&config](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(compare::AgreementCheck check,
                                       compare::ParseAgreementCheck(value));
             config.checks.push_back(std::move(check));
             return Status::OK();
           }},
      Flag{.name = "--flip-margin",
           .value_name = "EPS",
           .help = "A row counts toward flips only when the source's top-1 score leads its "
                   "runner-up by more than this (0: every row without a source tie)",
           .default_text = "0",
           .examples = {"0.1"},
           .apply = [&config](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(config.options.flip_margin,
                                       ParseNumber(value, 0.0, std::numeric_limits<double>::max()));
             return Status::OK();
           }},
      Flag{.name = "--top-k",
           .value_name = "K",
           .help = "The k of the reported top-k agreement; checks may name any k",
           .default_text = std::to_string(defaults.top_k.front()),
           .examples = {"3"},
           .apply = [&config](const std::string& value) -> Status {
             CONVGATE_ASSIGN_OR_RETURN(const int64_t k, ParseInteger(value, 1, 1000000));
             config.options.top_k = {static_cast<int>(k)};
             return Status::OK();
           }},
  });
}

}  // namespace convgate::cli
