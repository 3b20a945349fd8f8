#include "report/json/codec.h"

#include <algorithm>
#include <cmath>

namespace convgate::report::internal {

nlohmann::json Number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

nlohmann::json EncodeNumber(double value) { return Number(value); }

double DecodeNumber(const JsonFields& json, std::string_view key) { return json.Number(key); }

int64_t DecodeInteger(const JsonFields& json, std::string_view key, int64_t lo, int64_t hi) {
  const int64_t value = json.Int(key);
  if (value < lo) {
    json.Fail(key, lo == -1 ? "expected a flat index or -1, got " + std::to_string(value)
                            : "expected a count (>= 0), got " + std::to_string(value));
  }
  if (value > hi) json.Fail(key, "is out of range");
  return value;
}

std::vector<int64_t> DecodeIntArray(const JsonFields& json, std::string_view key) {
  const nlohmann::json& array = json.Raw(key);
  const bool ok = array.is_array() && std::all_of(array.begin(), array.end(), [](const auto& item) {
                    return item.is_number_integer();
                  });
  if (!ok) json.Fail(key, "expected an array of integers");
  return array.get<std::vector<int64_t>>();
}

std::vector<int64_t> DecodeIndex(const JsonFields& json, std::string_view key) {
  std::vector<int64_t> index = json.Ints(key);
  for (int64_t coordinate : index) {
    if (coordinate < 0) json.Fail(key, "holds the negative " + std::to_string(coordinate));
  }
  return index;
}

}  // namespace convgate::report::internal
