#include "gate/compare_agreement.h"

#include <algorithm>

#include "convgate/core/join.h"

namespace convgate::gate::internal {
namespace {

bool HasOutput(const SideRecord& side, const std::string& name) {
  return std::find(side.output_names.begin(), side.output_names.end(), name) !=
         side.output_names.end();
}

// Top-k agreement is counted for every k a check names, besides the reported one.
compare::AgreementConfig WithCheckedK(compare::AgreementConfig config) {
  for (const compare::AgreementCheck& check : config.checks) {
    if (check.metric == compare::AgreementMetric::kTopK) config.options.top_k.push_back(check.k);
  }
  return config;
}

}  // namespace

AgreementTracker::AgreementTracker(const compare::AgreementConfig& config)
    : config_(WithCheckedK(config)), named_(config.NamedOutputs()) {}

std::optional<GateError> AgreementTracker::CheckNames(const SideRecord& source,
                                                      const SideRecord& target) const {
  for (const std::string& name : named_) {
    if (HasOutput(source, name) || HasOutput(target, name)) continue;
    return GateError{Stage::kFlags,
                     Status::InvalidArgument("--classifier/--agreement name output '" + name +
                                             "', which neither side has (source outputs: " +
                                             JoinComma(source.output_names, "none") + ")")};
  }
  return std::nullopt;
}

AgreementTracker::Tracked* AgreementTracker::Find(const std::string& output) {
  for (Tracked& tracked : tracked_) {
    if (tracked.record.output == output) return &tracked;
  }
  return nullptr;
}

// Decides from the first sample's source tensor; later samples are read the same way.
void AgreementTracker::Start(const std::string& output, const Tensor& source) {
  const bool named = std::find(named_.begin(), named_.end(), output) != named_.end();
  const std::optional<compare::PredictionKind> kind =
      compare::PredictionKindFor(output, source.dtype(), source.shape(), named);
  if (!kind.has_value() && !named) {
    not_classifiers_.insert(output);
    return;
  }
  Tracked tracked;
  tracked.record.output = output;
  tracked.record.selected_by = named ? "named" : "detected";
  if (kind.has_value()) {
    tracked.record.stats.kind = *kind;
    tracked.accumulator.emplace(*kind, config_.options);
  } else {
    tracked.record.error = "a " + std::string(DTypeName(source.dtype())) +
                           " tensor holds neither class scores nor labels";
  }
  tracked_.push_back(std::move(tracked));
}

void AgreementTracker::Add(const TensorMap& source, const TensorMap& target) {
  for (const auto& entry : source) {
    const Tensor* other = target.Find(entry.name);
    if (other == nullptr || not_classifiers_.count(entry.name) > 0) continue;
    if (Find(entry.name) == nullptr) Start(entry.name, entry.tensor);
    Tracked* tracked = Find(entry.name);
    if (tracked == nullptr || !tracked->accumulator.has_value()) continue;
    Status added = tracked->accumulator->Add(entry.tensor, *other);
    if (added.ok()) continue;
    // Partial counts would mislead: keep none, say why.
    tracked->record.error = "sample " + std::to_string(sample_) + ": " + added.message();
    tracked->accumulator.reset();
  }
  ++sample_;
}

void AgreementTracker::Judge(AgreementRecord& record) const {
  for (const compare::AgreementCheck& check : config_.checks) {
    if (check.output != record.output) continue;
    AgreementCheckResult result{check.text, false, ""};
    if (!record.error.empty()) {
      result.message = "output '" + record.output + "': agreement not counted: " + record.error;
    } else {
      compare::AgreementVerdict verdict = compare::EvaluateAgreementCheck(check, record.stats);
      result.passed = verdict.passed;
      result.message = std::move(verdict.message);
    }
    record.checks.push_back(std::move(result));
  }
}

std::vector<AgreementRecord> AgreementTracker::Finish() const {
  std::vector<AgreementRecord> records;
  for (const Tracked& tracked : tracked_) {
    AgreementRecord record = tracked.record;
    if (tracked.accumulator.has_value()) record.stats = tracked.accumulator->Stats();
    records.push_back(std::move(record));
  }
  for (const std::string& name : named_) {
    const bool seen = std::any_of(records.begin(), records.end(),
                                  [&](const AgreementRecord& r) { return r.output == name; });
    if (seen) continue;
    AgreementRecord missing;
    missing.output = name;
    missing.selected_by = "named";
    missing.error = "no sample had an output '" + name + "' on both sides";
    records.push_back(std::move(missing));
  }
  for (AgreementRecord& record : records) Judge(record);
  return records;
}

}  // namespace convgate::gate::internal
