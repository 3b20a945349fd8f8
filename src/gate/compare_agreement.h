// The compare workflow's hook into classifier agreement: picks the classifier outputs (named or
// detected) on the first sample that holds them, feeds every sample to one AgreementAccumulator
// per output, and judges the --agreement checks at the end.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "convgate/compare/agreement_check.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"

namespace convgate::gate::internal {

class AgreementTracker {
 public:
  // Copies `config` and adds every k a check names to its top-k list.
  explicit AgreementTracker(const compare::AgreementConfig& config);

  // An output named by --classifier or --agreement that neither side has is a typo that would
  // silently never gate: a usage error (Stage::kFlags).
  std::optional<GateError> CheckNames(const SideRecord& source, const SideRecord& target) const;

  // One sample's outputs. Outputs the target lacks are skipped (that already fails the gate).
  void Add(const TensorMap& source, const TensorMap& target);

  // One record per classifier output in first-seen order (then named outputs the source never
  // produced, with an error), each with its checks judged.
  std::vector<AgreementRecord> Finish() const;

 private:
  struct Tracked {
    AgreementRecord record;
    std::optional<compare::AgreementAccumulator> accumulator;  // absent once record.error is set
  };
  Tracked* Find(const std::string& output);
  void Start(const std::string& output, const Tensor& source);
  void Judge(AgreementRecord& record) const;

  compare::AgreementConfig config_;
  std::vector<std::string> named_;  // by --classifier or a check (AgreementConfig::NamedOutputs)
  std::vector<Tracked> tracked_;
  std::set<std::string> not_classifiers_;  // outputs seen and found not to be classifier outputs
  int sample_ = 0;
};

}  // namespace convgate::gate::internal
