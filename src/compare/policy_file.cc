#include "convgate/compare/policy_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <string>

#include "convgate/core/file_util.h"
#include "convgate/core/utf8.h"

namespace convgate::compare {
namespace {

constexpr char kKnobs[] = "atol, rtol, check_error_stat, mismatch_ppm, min_cosine, min_snr_db";

// Everything an error message needs: the file, and where in it.
class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  // "p.yaml: line 4: outputs.logits.atol: 'abc' is not a number".
  Status Error(const YAML::Node& node, const std::string& path, const std::string& what) const {
    std::string where = std::string(file_) + ": ";
    const YAML::Mark mark = node.Mark();
    if (!mark.is_null()) where += "line " + std::to_string(mark.line + 1) + ": ";
    if (!path.empty()) where += path + ": ";
    return Status::InvalidArgument(where + what);
  }

  Status ExpectMap(const YAML::Node& node, const std::string& path) const {
    if (node.IsMap()) return Status::OK();
    return Error(node, path, "expected a mapping, got " + Kind(node));
  }

  Result<double> Number(const YAML::Node& node, const std::string& path,
                        std::string (*check)(double)) const {
    if (!node.IsScalar()) return Error(node, path, "expected a number, got " + Kind(node));
    const std::string& text = node.Scalar();
    double value = 0.0;
    const std::from_chars_result parsed =
        std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || parsed.ec != std::errc() || parsed.ptr != text.data() + text.size()) {
      return Error(node, path, "'" + text + "' is not a number");
    }
    if (std::string why = check(value); !why.empty()) {
      return Error(node, path, why + ", got " + text);
    }
    return value;
  }

  static std::string Kind(const YAML::Node& node) {
    if (node.IsMap()) return "a mapping";
    if (node.IsSequence()) return "a sequence";
    if (node.IsNull()) return "nothing (null)";
    return "'" + node.Scalar() + "'";
  }

 private:
  std::string_view file_;
};

// Sets one knob of `settings` from `value`. `known` is false when `key` names no knob.
Status ReadKnob(const Reader& reader, const YAML::Node& key_node, const YAML::Node& value,
                const std::string& path, PolicySettings& settings, bool& known) {
  const std::string key = key_node.Scalar();
  known = true;
  std::optional<double>* number = nullptr;
  std::string (*check)(double) = CheckTolerance;
  if (key == "atol") number = &settings.atol;
  if (key == "rtol") number = &settings.rtol;
  if (key == "mismatch_ppm") number = &settings.mismatch_ppm, check = CheckMismatchPpm;
  if (key == "min_cosine") number = &settings.min_cosine, check = CheckMinCosine;
  if (key == "min_snr_db") number = &settings.min_snr_db, check = CheckMinSnrDb;
  const bool is_knob = number != nullptr || key == "check_error_stat";
  // A key without a value has no position of its own (yaml-cpp marks it at the next line).
  if (is_knob && value.IsNull()) return reader.Error(key_node, path, "no value given");
  if (number != nullptr) {
    CONVGATE_ASSIGN_OR_RETURN(*number, reader.Number(value, path, check));
    return Status::OK();
  }
  if (key != "check_error_stat") {
    known = false;
    return Status::OK();
  }
  if (!value.IsScalar())
    return reader.Error(value, path, "expected a statistic, got " + Reader::Kind(value));
  Result<ErrorStat> stat = ParseErrorStat(value.Scalar());
  if (!stat.ok()) return reader.Error(value, path, stat.status().message());
  settings.check_error_stat = *stat;
  return Status::OK();
}

Status ReadOutputs(const Reader& reader, const YAML::Node& node, Policy& policy) {
  CONVGATE_RETURN_IF_ERROR(reader.ExpectMap(node, "outputs"));
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const std::string prefix = "outputs." + name;
    if (name.empty()) return reader.Error(entry.first, "outputs", "an output name is empty");
    CONVGATE_RETURN_IF_ERROR(reader.ExpectMap(entry.second, prefix));
    PolicySettings& settings = policy.per_output[name];
    for (const auto& knob : entry.second) {
      const std::string key = knob.first.Scalar();
      bool known = false;
      CONVGATE_RETURN_IF_ERROR(
          ReadKnob(reader, knob.first, knob.second, prefix + "." + key, settings, known));
      if (!known) {
        return reader.Error(knob.first, prefix,
                            "unknown key '" + key + "' (an output takes " + kKnobs + ")");
      }
    }
  }
  return Status::OK();
}

Result<DType> ReadDTypeKey(const Reader& reader, const YAML::Node& key) {
  const std::string path = "dtype_defaults." + key.Scalar();
  const std::optional<DType> dtype = ParseDType(key.Scalar());
  if (!dtype.has_value()) {
    return reader.Error(
        key, path, "unknown dtype '" + key.Scalar() + "' (float16, bfloat16, float32 or float64)");
  }
  if (!IsFloating(*dtype)) {
    return reader.Error(key, path,
                        "integer, bool and string outputs compare exactly: no tolerance to set");
  }
  return *dtype;
}

Status ReadDTypeDefaults(const Reader& reader, const YAML::Node& node, Policy& policy) {
  CONVGATE_RETURN_IF_ERROR(reader.ExpectMap(node, "dtype_defaults"));
  for (const auto& entry : node) {
    CONVGATE_ASSIGN_OR_RETURN(const DType dtype, ReadDTypeKey(reader, entry.first));
    const std::string prefix = "dtype_defaults." + entry.first.Scalar();
    CONVGATE_RETURN_IF_ERROR(reader.ExpectMap(entry.second, prefix));
    ToleranceOverride& values = policy.dtype_defaults[dtype];
    for (const auto& knob : entry.second) {
      const std::string key = knob.first.Scalar();
      if (key != "atol" && key != "rtol") {
        return reader.Error(knob.first, prefix,
                            "unknown key '" + key + "' (a dtype default takes atol and rtol)");
      }
      CONVGATE_ASSIGN_OR_RETURN(double value,
                                reader.Number(knob.second, prefix + "." + key, CheckTolerance));
      (key == "atol" ? values.atol : values.rtol) = value;
    }
  }
  return Status::OK();
}

Status ReadTopLevel(const Reader& reader, const YAML::Node& root, Policy& policy) {
  if (root.IsNull()) return Status::OK();  // an empty file
  CONVGATE_RETURN_IF_ERROR(reader.ExpectMap(root, ""));
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "outputs") {
      CONVGATE_RETURN_IF_ERROR(ReadOutputs(reader, entry.second, policy));
      continue;
    }
    if (key == "dtype_defaults") {
      CONVGATE_RETURN_IF_ERROR(ReadDTypeDefaults(reader, entry.second, policy));
      continue;
    }
    bool known = false;
    CONVGATE_RETURN_IF_ERROR(
        ReadKnob(reader, entry.first, entry.second, key, policy.global, known));
    if (!known) {
      return reader.Error(
          entry.first, "",
          "unknown key '" + key + "' (known: " + kKnobs + ", dtype_defaults, outputs)");
    }
  }
  return Status::OK();
}

// YAML text is Unicode (YAML 1.2, 5.2) and yaml-cpp passes bad bytes through: an output name
// holding them would only fail later, as a name no output has, without saying which file it came
// from. Names that are not UTF-8 can still be given on the command line (--atol NAME:VALUE).
Status CheckUtf8(std::string_view text, std::string_view file) {
  const std::optional<size_t> bad = FindInvalidUtf8(text);
  if (!bad) return Status::OK();
  const auto line = 1 + std::count(text.begin(), text.begin() + *bad, '\n');
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[*bad]));
  return Status::InvalidArgument(std::string(file) + ": line " + std::to_string(line) +
                                 ": not valid YAML: byte " + byte + " at offset " +
                                 std::to_string(*bad) + " is not UTF-8");
}

}  // namespace

Result<Policy> ParsePolicyYaml(std::string_view text, std::string_view file) {
  CONVGATE_RETURN_IF_ERROR(CheckUtf8(text, file));
  const Reader reader(file);
  // yaml-cpp reports errors by throwing; nothing leaves this function as an exception.
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    Policy policy;
    CONVGATE_RETURN_IF_ERROR(ReadTopLevel(reader, root, policy));
    return policy;
  } catch (const YAML::Exception& e) {
    std::string where = std::string(file) + ": ";
    if (!e.mark.is_null()) where += "line " + std::to_string(e.mark.line + 1) + ": ";
    return Status::InvalidArgument(where + "not valid YAML: " + e.msg);
  }
}

Result<Policy> ReadPolicyFile(const std::filesystem::path& path) {
  // A policy file is a flag's value: any reason it cannot be read (missing, a FIFO, too large) is
  // a usage error, found before anything loads.
  Result<std::string> text = ReadFile(path, kMaxTextFileBytes, "a YAML file");
  if (!text.ok()) {
    return Status::InvalidArgument("policy file " + path.string() + ": cannot be read (" +
                                   text.status().message() + ")");
  }
  return ParsePolicyYaml(*text, path.string());
}

}  // namespace convgate::compare
