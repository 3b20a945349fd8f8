#include "gate/calibrate.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "convgate/compare/tensor_compare.h"
#include "convgate/convert/cache.h"
#include "convgate/core/file_util.h"

namespace convgate::gate::internal {
namespace {

// Bumped when what a floor means changes, so older cache entries are not read as current.
constexpr char kCalibrationVersion[] = "convgate-calibration-1";

std::string ThreadsText(int threads) {
  if (threads <= 0) return "the runtime's default threads";
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

std::optional<std::filesystem::path> CacheFile(const std::filesystem::path& root,
                                               const std::string& key) {
  if (!root.empty()) return root / "calibration" / (key + ".json");
  Result<std::filesystem::path> fallback = convert::DefaultCacheDir();
  if (!fallback.ok()) return std::nullopt;
  return *fallback / "calibration" / (key + ".json");
}

// One source output's floor on one sample: the largest difference over the finite pairs.
void Widen(compare::NoiseFloor& floor, const Tensor& source, const Tensor& variant) {
  const compare::TensorComparison cmp = compare::CompareTensors(source, variant, {});
  if (cmp.exact || !cmp.values_compared || cmp.errors.compared == 0) return;
  floor.max_abs = std::max(floor.max_abs, cmp.errors.max_abs_error);
  floor.max_rel = std::max(floor.max_rel, cmp.errors.max_rel_error);
}

}  // namespace

std::optional<BenignVariant> BenignVariantFor(const std::string& backend,
                                              const backends::LoadOptions& gate) {
  BenignVariant variant;
  variant.options = gate;
  const int threads = gate.intra_op_threads == 1 ? 2 : 1;
  variant.options.intra_op_threads = threads;
  const std::string thread_change =
      ThreadsText(threads) + " vs " + ThreadsText(gate.intra_op_threads);
  if (backend == "ort") {
    const bool off = gate.graph_optimization == backends::GraphOptimization::kDisabled;
    variant.options.graph_optimization =
        off ? backends::GraphOptimization::kAll : backends::GraphOptimization::kDisabled;
    variant.description = std::string("ONNX Runtime optimization ") +
                          GraphOptimizationName(variant.options.graph_optimization) + " vs " +
                          GraphOptimizationName(gate.graph_optimization) + ", " + thread_change;
    return variant;
  }
  if (backend == "torch") {  // libtorch's kernels split their sums by thread
    variant.description = "libtorch " + thread_change;
    return variant;
  }
  return std::nullopt;
}

std::string CalibrationKey(const std::string& source_sha256, const std::vector<TensorMap>& samples,
                           const BenignVariant& variant) {
  std::string text =
      std::string(kCalibrationVersion) + "\n" + source_sha256 + "\n" + variant.description + "\n";
  for (const TensorMap& sample : samples) {
    for (const auto& entry : sample) {
      const Tensor& tensor = entry.tensor;
      text += entry.name + " " + tensor.Describe() + " ";
      if (tensor.dtype() == DType::kString) {
        for (const std::string& value : tensor.strings()) text += Sha256Hex(value);
      } else {
        const std::span<const std::byte> bytes = tensor.bytes();
        text += Sha256Hex({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
      }
      text += "\n";
    }
    text += "--\n";
  }
  return Sha256Hex(text);
}

std::optional<Calibration> ReadCachedCalibration(const std::filesystem::path& root,
                                                 const std::string& key) {
  const std::optional<std::filesystem::path> file = CacheFile(root, key);
  if (!file) return std::nullopt;
  std::error_code error;
  if (!std::filesystem::is_regular_file(*file, error)) return std::nullopt;
  Result<std::string> text = ReadFile(*file, 1 << 20);
  if (!text.ok()) return std::nullopt;
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    Calibration calibration;
    calibration.basis = json.at("basis").get<std::string>();
    for (const auto& [name, value] : json.at("floors").items()) {
      compare::NoiseFloor& floor = calibration.floors[name];
      floor.max_abs = value.at("max_abs").get<double>();
      floor.max_rel = value.at("max_rel").get<double>();
      // get<int>() of a float out of int's range is undefined behaviour: a damaged entry.
      if (!value.at("samples").is_number_integer()) return std::nullopt;
      floor.samples = value.at("samples").get<int>();
      if (!(floor.max_abs >= 0.0) || !(floor.max_rel >= 0.0)) return std::nullopt;
    }
    calibration.cache_hit = true;
    return calibration;
  } catch (const std::exception&) {  // a damaged entry is a miss
    return std::nullopt;
  }
}

void WriteCachedCalibration(const std::filesystem::path& root, const std::string& key,
                            const Calibration& calibration) {
  const std::optional<std::filesystem::path> file = CacheFile(root, key);
  if (!file) return;
  nlohmann::json floors = nlohmann::json::object();
  for (const auto& [name, floor] : calibration.floors) {
    floors[name] = {
        {"max_abs", floor.max_abs}, {"max_rel", floor.max_rel}, {"samples", floor.samples}};
  }
  const nlohmann::json json{{"basis", calibration.basis}, {"floors", floors}};
  std::error_code error;
  std::filesystem::create_directories(file->parent_path(), error);
  if (!error) (void)WriteFileAtomic(*file, json.dump(1) + "\n");
}

Result<Calibration> MeasureNoiseFloors(const session::ResolvedSide& source,
                                       backends::BackendFactory& factory,
                                       const BenignVariant& variant,
                                       const std::vector<TensorMap>& samples,
                                       const std::vector<TensorMap>& source_outputs) {
  const auto start = std::chrono::steady_clock::now();
  const std::string context = "the source under " + variant.description;
  session::SideRecord scratch;
  scratch.role = "source";
  Result<session::LoadedModel> loaded =
      session::LoadModel(source, factory, variant.options, scratch);
  if (!loaded.ok()) return loaded.status().WithContext(context);
  Calibration calibration;
  calibration.basis = variant.description;
  for (size_t idx = 0; idx < source_outputs.size() && idx < samples.size(); ++idx) {
    Result<TensorMap> outputs = loaded->model->Run(samples[idx], {});
    if (!outputs.ok()) {
      return outputs.status().WithContext(context + ", sample " + std::to_string(idx));
    }
    for (const auto& entry : source_outputs[idx]) {
      const Tensor* other = outputs->Find(entry.name);
      if (other == nullptr || !IsFloating(entry.tensor.dtype())) continue;
      compare::NoiseFloor& floor = calibration.floors[entry.name];
      Widen(floor, entry.tensor, *other);
      floor.samples = static_cast<int>(idx) + 1;
    }
  }
  calibration.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return calibration;
}

}  // namespace convgate::gate::internal
