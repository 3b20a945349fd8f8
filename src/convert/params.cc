#include "convert/params.h"

#include <charconv>
#include <filesystem>
#include <system_error>

namespace convgate::convert {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

Status CheckKnownParams(const Params& params, const std::set<std::string>& known,
                        std::string_view kind) {
  for (const auto& [name, value] : params) {
    if (known.count(name) > 0) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return Status::InvalidArgument("unknown parameter '" + name + "' for --to " +
                                   std::string(kind) +
                                   " (known: " + (list.empty() ? "none" : list) + ")");
  }
  return Status::OK();
}

Result<bool> BoolParam(const Params& params, const std::string& name, bool fallback,
                       std::string_view kind) {
  auto found = params.find(name);
  if (found == params.end()) return fallback;
  const std::string& value = found->second;
  if (value == "1" || value == "true" || value == "yes") return true;
  if (value == "0" || value == "false" || value == "no") return false;
  return Status::InvalidArgument("parameter " + name + "='" + value + "' for --to " +
                                 std::string(kind) + " is not 0 or 1");
}

Result<std::optional<int64_t>> IntParam(const Params& params, const std::string& name,
                                        std::string_view kind) {
  auto found = params.find(name);
  if (found == params.end()) return std::optional<int64_t>();
  const std::string& value = found->second;
  int64_t parsed = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed < 0) {
    return Status::InvalidArgument("parameter " + name + "='" + value + "' for --to " +
                                   std::string(kind) + " is not a non-negative integer");
  }
  return std::optional<int64_t>(parsed);
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  while (true) {
    const size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    if (!item.empty()) items.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

Status CheckChoice(const Params& params, const std::string& name,
                   std::initializer_list<std::string_view> choices, std::string_view kind) {
  auto found = params.find(name);
  if (found == params.end()) return Status::OK();
  for (std::string_view choice : choices) {
    if (found->second == choice) return Status::OK();
  }
  std::string known;
  for (std::string_view choice : choices) {
    known += (known.empty() ? "" : ", ") + std::string(choice);
  }
  return Status::InvalidArgument("parameter " + name + "='" + found->second + "' for --to " +
                                 std::string(kind) + ": one of " + known);
}

Result<std::string> CalibrationParam(const Params& params, std::string_view kind) {
  auto calibration = params.find("calibration");
  if (calibration == params.end()) {
    return Status::InvalidArgument(
        "--to " + std::string(kind) +
        " calibrates activation ranges on samples: give --param calibration=inputs.npz (verify "
        "uses its own inputs, or --data's)");
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(calibration->second, error)) {
    return Status::InvalidArgument("parameter calibration='" + calibration->second + "' for --to " +
                                   std::string(kind) + ": no such file");
  }
  return calibration->second;
}

}  // namespace convgate::convert
