// The per-output rows of report.json: compare's "results" (one per output per sample) and
// "aggregates" (one per output), and run's "results". Compare's are read back by `convgate check`
// through the same descriptions.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "convgate/gate/results.h"
#include "report/json/codec.h"

namespace convgate::report::internal {

// compare's "results". What repeats is written once (schema 2): a result leaves out its policy
// when it repeats the previous result's of the same output, and the hints every failing result of
// an output gives are written in that output's aggregates row (AggregatesJson) instead.
nlohmann::json CompareResultsJson(const gate::CompareReport& report);
// "results" of `report`, each result's policy carried over from the previous result of its
// output when left out. Throws BadField.
std::vector<gate::OutputCheck> CompareResultsFromJson(const JsonFields& report);

// compare's "aggregates", and back (none when absent). Reading gives each failing result of an
// output the hints its row holds back (before its own: the order the writer found them in the
// first failing result).
nlohmann::json AggregatesJson(const gate::CompareReport& report);
std::vector<gate::OutputAggregate> AggregatesFromJson(const JsonFields& report,
                                                      std::vector<gate::OutputCheck>& checks);

// run's "results", and back. Throws BadField.
nlohmann::json SanityResultsJson(const gate::RunReport& report);
std::vector<gate::SanityCheck> SanityResultsFromJson(const JsonFields& report);

}  // namespace convgate::report::internal
