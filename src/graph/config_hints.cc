#include "graph/config_hints.h"

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace convgate::graph {
namespace {

std::optional<nlohmann::json> ReadJsonObject(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    nlohmann::json json = nlohmann::json::parse(in);
    if (json.is_object()) return json;
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

// A positive integer at `key`, or element `index` of an array there ([h, w]).
std::optional<int64_t> PositiveSize(const nlohmann::json& object, const char* key,
                                    size_t index = 0) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  const nlohmann::json* value = &*it;
  if (value->is_array()) {
    if (value->size() <= index) return std::nullopt;
    value = &(*value)[index];
  }
  if (!value->is_number_integer()) return std::nullopt;
  const int64_t size = value->get<int64_t>();
  if (size <= 0) return std::nullopt;
  return size;
}

void AddDefault(TensorInfo& input, size_t axis, std::optional<int64_t> value,
                const std::string& source) {
  if (!value || axis >= input.shape.size() || input.shape[axis].is_fixed() ||
      input.shape[axis].symbol.empty()) {
    return;
  }
  input.hint.dim_defaults.push_back(InputHint::DimDefault{axis, *value, source});
}

void HintImage(const nlohmann::json& config, TensorInfo& input) {
  auto vision_it = config.find("vision_config");
  const bool nested = vision_it != config.end() && vision_it->is_object();
  const nlohmann::json& vision = nested ? *vision_it : config;
  const std::string where =
      std::string("config.json beside the model: ") + (nested ? "vision_config." : "");
  const auto text = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : ""; };
  if (input.hint.channels <= 0) {
    std::optional<int64_t> channels = PositiveSize(vision, "num_channels");
    AddDefault(input, 1, channels, where + "num_channels " + text(channels));
  }
  std::optional<int64_t> height = PositiveSize(vision, "image_size", 0);
  std::optional<int64_t> width = PositiveSize(vision, "image_size", 1);
  AddDefault(input, 2, height, where + "image_size " + text(height));
  AddDefault(input, 3, width, where + "image_size " + text(width));
}

void HintAudio(const std::filesystem::path& folder, TensorInfo& input) {
  std::optional<nlohmann::json> processor = ReadJsonObject(folder / "preprocessor_config.json");
  if (!processor) return;
  std::optional<int64_t> rate = PositiveSize(*processor, "sampling_rate");
  AddDefault(input, 1, rate,
             "preprocessor_config.json beside the model: one second at sampling_rate " +
                 (rate ? std::to_string(*rate) : std::string()));
}

}  // namespace

void AddConfigHints(const std::filesystem::path& folder, Signature& signature) {
  std::optional<nlohmann::json> config = ReadJsonObject(folder / "config.json");
  if (!config) return;
  for (TensorInfo& input : signature.inputs) {
    if (!input.dtype || !IsFloating(*input.dtype) || !input.has_shape) continue;
    if (input.shape.size() == 4) HintImage(*config, input);
    if (input.shape.size() == 2 && input.name == "input_values") HintAudio(folder, input);
  }
}

}  // namespace convgate::graph
