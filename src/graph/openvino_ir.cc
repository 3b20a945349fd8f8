#include "convgate/graph/openvino_ir.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace convgate::graph {
namespace {

// One start or empty-element tag of the XML: its name and attributes (entities decoded).
struct Tag {
  std::string name;
  std::map<std::string, std::string> attributes;
  bool closing = false;  // </name>
  bool empty = false;    // <name ... />
};

std::string DecodeEntities(std::string_view text) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  std::string out;
  for (size_t i = 0; i < text.size();) {
    bool decoded = false;
    if (text[i] == '&') {
      for (const auto& [entity, value] : kEntities) {
        if (text.substr(i, entity.size()) == entity) {
          out += value;
          i += entity.size();
          decoded = true;
          break;
        }
      }
    }
    if (!decoded) out += text[i++];
  }
  return out;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Parses the inside of a tag, "<" and ">" excluded. nullopt when it is not well formed.
std::optional<Tag> ParseTag(std::string_view inside) {
  Tag tag;
  if (!inside.empty() && inside.front() == '/') {
    tag.closing = true;
    inside.remove_prefix(1);
  }
  if (!inside.empty() && inside.back() == '/') {
    tag.empty = true;
    inside.remove_suffix(1);
  }
  size_t i = 0;
  while (i < inside.size() && !IsSpace(inside[i])) ++i;
  tag.name = std::string(inside.substr(0, i));
  while (true) {
    while (i < inside.size() && IsSpace(inside[i])) ++i;
    if (i >= inside.size()) return tag;
    const size_t equals = inside.find('=', i);
    if (equals == std::string_view::npos || equals + 1 >= inside.size()) return std::nullopt;
    std::string key(inside.substr(i, equals - i));
    while (!key.empty() && IsSpace(key.back())) key.pop_back();
    const char quote = inside[equals + 1];
    if (quote != '"' && quote != '\'') return std::nullopt;
    const size_t end = inside.find(quote, equals + 2);
    if (end == std::string_view::npos) return std::nullopt;
    tag.attributes[key] = DecodeEntities(inside.substr(equals + 2, end - equals - 2));
    i = end + 1;
  }
}

// A port's `names`: comma-separated, a comma inside a name escaped as "\,".
std::vector<std::string> SplitNames(const std::string& names) {
  std::vector<std::string> out;
  std::string current;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == '\\' && i + 1 < names.size() && names[i + 1] == ',') {
      current += ',';
      ++i;
    } else if (names[i] == ',') {
      out.push_back(current);
      current.clear();
    } else {
      current += names[i];
    }
  }
  if (!current.empty() || !out.empty()) out.push_back(current);
  return out;
}

// A fused-names list: comma-separated, spaces around the names dropped ("a, b" and "a,b").
std::vector<std::string> SplitFusedNames(const std::string& value) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    size_t first = start, last = end;
    while (first < last && IsSpace(value[first])) ++first;
    while (last > first && IsSpace(value[last - 1])) --last;
    if (last > first) names.push_back(value.substr(first, last - first));
    start = end + 1;
  }
  return names;
}

struct Layer {
  NodeInfo info;
  std::map<int, std::vector<std::string>> port_names;  // output port id -> names
  std::map<int, std::string> input_ports;              // input port id -> feeding tensor
  bool listed = true;                                  // not Parameter, Const or Result
};

// What the walk over the tags collects.
struct IrGraph {
  std::vector<std::string> order;  // layer ids in file order
  std::map<std::string, Layer> layers;
  struct Edge {
    std::string from_layer, to_layer;
    int from_port = 0, to_port = 0;
  };
  std::vector<Edge> edges;
};

std::string Attribute(const Tag& tag, const std::string& key) {
  const auto found = tag.attributes.find(key);
  return found == tag.attributes.end() ? "" : found->second;
}

// Ids and port numbers are decimal; a missing or malformed one is -1, which matches no port.
int IntAttribute(const Tag& tag, const std::string& key) {
  const std::string value = Attribute(tag, key);
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::atoi(value.c_str());
}

void AddTag(const Tag& tag, const std::vector<std::string>& stack, std::string& layer_id,
            IrGraph& graph) {
  // Only the main graph: <net><layers><layer> and <net><edges><edge>, not a body's.
  const size_t depth = stack.size();
  if (tag.name == "layer" && depth == 2 && stack[1] == "layers") {
    layer_id = Attribute(tag, "id");
    Layer& layer = graph.layers[layer_id];
    graph.order.push_back(layer_id);
    layer.info.name = Attribute(tag, "name");
    layer.info.op_type = Attribute(tag, "type");
    const std::string& type = layer.info.op_type;
    layer.listed = type != "Parameter" && type != "Const" && type != "Result";
  } else if (tag.name == "port" && depth == 4 && stack[1] == "layers" && stack[3] == "output") {
    const auto names = tag.attributes.find("names");
    graph.layers[layer_id].port_names[IntAttribute(tag, "id")] =
        names == tag.attributes.end() ? std::vector<std::string>{} : SplitNames(names->second);
  } else if (tag.name == "attribute" && depth == 4 && stack[1] == "layers" &&
             stack[3] == "rt_info") {
    // <rt_info><attribute name="fused_names" version="0" value="Conv_0,BatchNormalization_1"/>
    const std::string name = Attribute(tag, "name");
    if (name == "fused_names" || name == "originalLayersNames") {
      graph.layers[layer_id].info.fused = SplitFusedNames(Attribute(tag, "value"));
    }
  } else if (tag.name == "data" && depth == 3 && stack[1] == "layers" &&
             tag.attributes.count("originalLayersNames") != 0) {
    graph.layers[layer_id].info.fused = SplitFusedNames(Attribute(tag, "originalLayersNames"));
  } else if (tag.name == "edge" && depth == 2 && stack[1] == "edges") {
    IrGraph::Edge edge;
    edge.from_layer = Attribute(tag, "from-layer");
    edge.from_port = IntAttribute(tag, "from-port");
    edge.to_layer = Attribute(tag, "to-layer");
    edge.to_port = IntAttribute(tag, "to-port");
    graph.edges.push_back(std::move(edge));
  }
}

Status NotIr(const std::filesystem::path& path, const std::string& why) {
  return Status::DataLoss(path.string() + ": not an OpenVINO IR (" + why + ")");
}

Result<IrGraph> WalkTags(std::string_view xml, const std::filesystem::path& path) {
  IrGraph graph;
  std::vector<std::string> stack;
  std::string layer_id;
  size_t i = 0;
  while ((i = xml.find('<', i)) != std::string_view::npos) {
    if (xml.substr(i, 4) == "<!--") {
      i = xml.find("-->", i);
      if (i == std::string_view::npos) return NotIr(path, "an unterminated comment");
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string_view::npos) return NotIr(path, "an unterminated tag");
    const std::string_view inside = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (inside.empty() || inside.front() == '?' || inside.front() == '!') continue;
    std::optional<Tag> tag = ParseTag(inside);
    if (!tag) return NotIr(path, "a malformed tag <" + std::string(inside.substr(0, 80)) + ">");
    if (tag->closing) {
      if (stack.empty() || stack.back() != tag->name) {
        return NotIr(path, "</" + tag->name + "> closes nothing open");
      }
      stack.pop_back();
      continue;
    }
    if (stack.empty() && tag->name != "net") return NotIr(path, "the root is <" + tag->name + ">");
    AddTag(*tag, stack, layer_id, graph);
    if (!tag->empty) stack.push_back(tag->name);
  }
  if (!stack.empty()) return NotIr(path, "it ends inside <" + stack.back() + "> (truncated?)");
  if (graph.order.empty()) return NotIr(path, "no <net><layers>");
  return graph;
}

}  // namespace

bool IsOpenVinoIr(const std::filesystem::path& path) { return path.extension() == ".xml"; }

Result<std::vector<NodeInfo>> ListOpenVinoIrNodes(std::string_view xml,
                                                  const std::filesystem::path& path) {
  CONVGATE_ASSIGN_OR_RETURN(IrGraph graph, WalkTags(xml, path));
  for (const IrGraph::Edge& edge : graph.edges) {
    auto from = graph.layers.find(edge.from_layer);
    auto to = graph.layers.find(edge.to_layer);
    if (from == graph.layers.end() || to == graph.layers.end()) {
      return NotIr(path, "an edge between layers " + edge.from_layer + " and " + edge.to_layer +
                             " that do not exist");
    }
    const auto names = from->second.port_names.find(edge.from_port);
    const bool named = names != from->second.port_names.end() && !names->second.empty();
    to->second.input_ports[edge.to_port] = named ? names->second.front() : "";
  }
  std::vector<NodeInfo> nodes;
  for (const std::string& id : graph.order) {
    Layer& layer = graph.layers[id];
    if (!layer.listed) continue;
    for (const auto& [port, names] : layer.port_names) {
      layer.info.outputs.insert(layer.info.outputs.end(), names.begin(), names.end());
    }
    for (const auto& [port, tensor] : layer.input_ports) layer.info.inputs.push_back(tensor);
    nodes.push_back(std::move(layer.info));
  }
  return nodes;
}

}  // namespace convgate::graph
