// Built-in conversions run in a forked child: the timeout can stop them, and a crash inside a
// converter library (onnx's version converter asserts on some graphs) fails one attempt instead
// of taking convgate down. The child reports through a small JSON file beside its output.
#include <nlohmann/json.hpp>

#include "convert/converter.h"
#include "convert/retry.h"
#include "convgate/core/file_util.h"
#include "convgate/core/json_field.h"

namespace convgate::convert {
namespace {

constexpr char kResultFile[] = "builtin_result.json";

int ReportFromChild(const Result<std::vector<std::string>>& converted,
                    const std::filesystem::path& result_path) {
  nlohmann::json result;
  if (converted.ok()) {
    result = {{"ok", true}, {"notes", *converted}};
  } else {
    result = {{"ok", false},
              {"code", static_cast<int>(converted.status().code())},
              {"message", converted.status().message()}};
  }
  // A message from a converter library may hold bytes that are not UTF-8; replace them.
  const std::string text = result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return WriteFileAtomic(result_path, text).ok() ? 0 : 1;
}

// Which typed error a built-in converter's Status is.
ConversionError ErrorForCode(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return ConversionError::kBadRequest;
    case StatusCode::kNotFound:
      return ConversionError::kSourceNotFound;
    default:
      return ConversionError::kFailed;
  }
}

AttemptResult ReadChildReport(const std::filesystem::path& result_path) {
  AttemptResult attempt;
  Result<std::string> text = ReadFile(result_path, kMaxTextFileBytes, "a JSON file");
  nlohmann::json result =
      text.ok() ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!result.is_object() || !result.contains("ok")) {
    attempt.error = ConversionError::kFailed;
    attempt.problem = "the conversion process exited without reporting a result";
    return attempt;
  }
  if (JsonBoolOr(result, "ok", false)) {
    const nlohmann::json notes = result.contains("notes") ? result["notes"] : nlohmann::json();
    for (const nlohmann::json& note : notes.is_array() ? notes : nlohmann::json::array()) {
      if (note.is_string()) attempt.notes.push_back(note.get<std::string>());
    }
    return attempt;
  }
  attempt.error = ErrorForCode(static_cast<StatusCode>(JsonIntOr(result, "code", 0)));
  attempt.problem = JsonTextOr(result, "message", "unknown error");
  return attempt;
}

}  // namespace

AttemptResult RunBuiltinIsolated(const BuiltinFn& convert, const std::filesystem::path& source,
                                 const std::filesystem::path& out, double timeout_seconds) {
  const std::filesystem::path result_path = out.parent_path() / kResultFile;
  SubprocessOptions options;
  options.timeout_seconds = timeout_seconds;
  Result<SubprocessResult> run = RunInForkedChild(
      [&]() { return ReportFromChild(convert(source, out), result_path); }, options);
  if (!run.ok()) {
    AttemptResult attempt;
    attempt.error = ConversionError::kFailed;
    attempt.problem = "cannot start the conversion process: " + run.status().message();
    return attempt;
  }
  AttemptResult attempt = AttemptFromProcess(*run);
  if (!attempt.ok()) {
    // A signal it did not get from convgate (a timeout or an interrupt) is a crash.
    if (run->signal != 0 && !run->timed_out && run->interrupted_by == 0) {
      attempt.problem = "the conversion process crashed: it " + attempt.problem;
    }
    return attempt;
  }
  AttemptResult reported = ReadChildReport(result_path);
  reported.log_tail = std::move(attempt.log_tail);
  std::error_code ignored;
  std::filesystem::remove(result_path, ignored);
  return reported;
}

}  // namespace convgate::convert
