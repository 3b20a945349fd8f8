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

}  // namespace

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
    passes.push_back({{"name", pass.spec.name},
                      {"params", pass.spec.params},
                      {"signature", pass.signature},
                      {"preserves_computation", pass.preserves_computation},
                      {"counts", CountByKind(pass)},
                      {"changed_nodes", std::move(nodes)}});
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
    if (!list_nodes) continue;
    for (const NodeChange& change : pass.changes) {
      out << "    " << change.kind << " " << change.op << " '" << change.node
          << "': " << change.change << "\n";
    }
  }
  return out.str();
}

}  // namespace convgate::transform
