// The transform record as JSON and as console text.
#include <map>
#include <sstream>

#include "convgate/transform/transform.h"

namespace convgate::transform {
namespace {

std::map<std::string, int> CountByKind(const PassRecord& pass) {
  std::map<std::string, int> counts = {{"created", 0}, {"changed", 0}, {"removed", 0}};
  for (const NodeChange& change : pass.changes) ++counts[change.kind];
  return counts;
}

std::string SpecText(const PassSpec& spec) {
  std::string text = spec.name;
  for (const auto& [key, value] : spec.params) text += ":" + key + "=" + value;
  return text;
}

// "Identity or Dropout" from the kinds a pass looks for.
std::string KindsText(const std::map<std::string, int64_t>& candidates) {
  std::string text;
  size_t index = 0;
  for (const auto& [kind, count] : candidates) {
    if (index > 0) text += index + 1 == candidates.size() ? " or " : ", ";
    text += kind;
    ++index;
  }
  return text;
}

std::string SkipLine(const PassRecord& pass, const SkippedNodes& skipped) {
  auto found = pass.candidates.find(skipped.kind);
  const auto count = static_cast<int64_t>(skipped.nodes.size());
  const int64_t total = found == pass.candidates.end() ? count : found->second;
  std::string line = pass.spec.name + ": " + std::to_string(count) + " of " +
                     std::to_string(total) + " " + skipped.kind +
                     (total == 1 ? " node" : " nodes") + " not " + pass.action + ": " +
                     skipped.reason + " (first '" + skipped.nodes.front() + "'";
  if (!skipped.first_detail.empty()) line += ": " + skipped.first_detail;
  return line + ")";
}

}  // namespace

std::vector<std::string> SkipNotes(const PassRecord& pass) {
  int64_t candidates = 0;
  for (const auto& [kind, count] : pass.candidates) candidates += count;
  if (candidates == 0 && !pass.candidates.empty()) {
    return {pass.spec.name + ": no " + KindsText(pass.candidates) + " node in the main graph"};
  }
  std::vector<std::string> notes;
  for (const SkippedNodes& skipped : pass.skipped) notes.push_back(SkipLine(pass, skipped));
  return notes;
}

nlohmann::json TransformJson(const TransformRecord& record) {
  nlohmann::json passes = nlohmann::json::array();
  for (const PassRecord& pass : record.passes) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeChange& change : pass.changes) {
      nodes.push_back({{"kind", change.kind},
                       {"node", change.node},
                       {"op", change.op},
                       {"change", change.change}});
    }
    nlohmann::json skipped = nlohmann::json::array();
    for (const SkippedNodes& skip : pass.skipped) {
      skipped.push_back({{"kind", skip.kind},
                         {"reason", skip.reason},
                         {"count", skip.nodes.size()},
                         {"nodes", skip.nodes},
                         {"first_detail", skip.first_detail}});
    }
    passes.push_back({{"name", pass.spec.name},
                      {"params", pass.spec.params},
                      {"signature", pass.signature},
                      {"preserves_computation", pass.preserves_computation},
                      {"counts", CountByKind(pass)},
                      {"changed_nodes", std::move(nodes)},
                      {"candidates", pass.candidates},
                      {"skipped", std::move(skipped)},
                      {"notes", SkipNotes(pass)}});
  }
  return {{"source", record.source.string()},
          {"output", record.output.string()},
          {"nodes_before", record.nodes_before},
          {"nodes_after", record.nodes_after},
          {"passes", std::move(passes)}};
}

std::string TransformText(const TransformRecord& record, bool list_nodes) {
  std::ostringstream out;
  out << "transformed " << record.source.string() << " -> " << record.output.string() << " ("
      << record.nodes_before << " -> " << record.nodes_after << " nodes)\n";
  for (const PassRecord& pass : record.passes) {
    const std::map<std::string, int> counts = CountByKind(pass);
    out << "  " << SpecText(pass.spec) << " [" << pass.signature << "] "
        << (pass.preserves_computation ? "exact" : "approximate") << ": " << counts.at("created")
        << " created, " << counts.at("changed") << " changed, " << counts.at("removed")
        << " removed\n";
    for (const std::string& note : SkipNotes(pass)) out << "    " << note << "\n";
    if (!list_nodes) continue;
    for (const NodeChange& change : pass.changes) {
      out << "    " << change.kind << " " << change.op << " '" << change.node
          << "': " << change.change << "\n";
    }
    for (const SkippedNodes& skipped : pass.skipped) {
      std::string nodes;
      for (const std::string& node : skipped.nodes)
        nodes += (nodes.empty() ? "'" : ", '") + node + "'";
      out << "    skipped " << skipped.kind << " " << nodes << ": " << skipped.reason << "\n";
    }
  }
  return out.str();
}

}  // namespace convgate::transform
