#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>
#include <variant>

#include "convgate/batch/batch.h"
#include "convgate/core/text_table.h"
#include "convgate/core/units.h"
#include "convgate/store/job_fields.h"

namespace convgate::batch {

std::string VerdictWord(Verdict verdict) {
  std::string word(VerdictName(verdict));
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return word;
}

std::string JobSecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", seconds);
  return text;
}

std::string JobErrorText(const store::JobRecord& job) {
  std::string error = job.error_category;
  const std::string first_line = job.error_text.substr(0, job.error_text.find('\n'));
  if (!first_line.empty()) error += (error.empty() ? "" : ": ") + first_line;
  return error.size() > 100 ? error.substr(0, 97) + "..." : error;
}

// {"pass": 3, "error": 1}: the verdicts recorded earlier of entries skipped as done.
nlohmann::json SkippedVerdictsJson(const std::map<Verdict, int>& verdicts) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [verdict, count] : verdicts) json[std::string(VerdictName(verdict))] = count;
  return json;
}

nlohmann::json JobJson(const store::JobRecord& job) {
  nlohmann::json json = nlohmann::json::object();
  for (const store::JobField& field : store::JobFields()) {
    // model_origin (json_text): the document written by this convgate (report::ModelOriginsJson),
    // or null for none; a row edited by hand reads as none.
    if (field.json_text) {
      const std::string& text = job.*std::get<std::string store::JobRecord::*>(field.member);
      nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      json[field.json_key] = parsed.is_array() ? parsed : nlohmann::json(nullptr);
      continue;
    }
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), Verdict store::JobRecord::*>) {
            json[field.json_key] = VerdictName(job.*member);
          } else {
            json[field.json_key] = job.*member;
          }
        },
        field.member);
  }
  // summary.json and the Slurm summary have always named the entry "id".
  json["id"] = job.entry_id;
  return json;
}

nlohmann::json SummaryJson(const BatchSummary& summary) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const store::JobRecord& job : summary.jobs) {
    nlohmann::json row = JobJson(job);
    row["attempts"] = summary.attempts.count(job.entry_id) ? summary.attempts.at(job.entry_id) : 1;
    jobs.push_back(std::move(row));
  }
  return {{"manifest", summary.manifest},
          {"store", summary.store},
          {"run_id", summary.run_id},
          {"manifest_entries", summary.manifest_entries},
          {"entries", summary.entries},
          {"passed", summary.passed},
          {"failed", summary.failed},
          {"errors", summary.errors},
          {"errors_by_category", summary.errors_by_category},
          {"skipped_done", summary.skipped_done},
          {"skipped_verdicts", SkippedVerdictsJson(summary.skipped_verdicts)},
          {"retried", summary.retried},
          {"cache_cleanup", CacheCleanupJson(summary.cache_cleanup)},
          {"interrupted", summary.interrupted},
          {"wall_seconds", summary.wall_seconds},
          {"exit_code", ToInt(summary.exit_code)},
          {"jobs", jobs}};
}

std::string SummaryText(const BatchSummary& summary) {
  std::string text = "convgate batch " + summary.manifest + "  (store " + summary.store + ", run " +
                     std::to_string(summary.run_id) + ")\n\n";
  if (!summary.jobs.empty()) {
    TextTable table({"entry", "command", "model type", "verdict", "seconds", "error"});
    for (const store::JobRecord& job : summary.jobs) {
      std::string type = job.model_type.empty() ? "-" : job.model_type;
      type += " (" + job.model_type_source + ")";
      table.AddRow({job.entry_id, job.command, type, VerdictWord(job.verdict),
                    JobSecondsText(job.duration_seconds), JobErrorText(job)});
    }
    text += table.Render() + "\n";
  }
  text += "entries " + std::to_string(summary.entries);
  if (summary.entries != summary.manifest_entries) {
    text += " (of " + std::to_string(summary.manifest_entries) + " in the manifest)";
  }
  text += ": " + std::to_string(summary.passed) + " passed, " + std::to_string(summary.failed) +
          " failed, " + std::to_string(summary.errors) +
          (summary.errors == 1 ? " error" : " errors");
  if (!summary.errors_by_category.empty()) {
    std::string categories;
    for (const auto& [category, count] : summary.errors_by_category) {
      categories += (categories.empty() ? "" : ", ") + category + " " + std::to_string(count);
    }
    text += " (" + categories + ")";
  }
  text += ", " + std::to_string(summary.skipped_done) + " skipped as done";
  if (!summary.skipped_verdicts.empty()) {
    std::string verdicts;
    for (const auto& [verdict, count] : summary.skipped_verdicts) {
      verdicts += (verdicts.empty() ? "" : ", ") + std::string(VerdictName(verdict)) + " " +
                  std::to_string(count);
    }
    text += " (recorded earlier: " + verdicts + ")";
  }
  if (summary.retried > 0) {
    text += ", " + std::to_string(summary.retried) + " retried after a transient failure";
  }
  text += "; wall " + FormatSeconds(summary.wall_seconds) + "\n";
  text += CacheCleanupText(summary.cache_cleanup);
  if (summary.interrupted) {
    return text + "BATCH INTERRUPTED: the unfinished entries run again with --resume\n";
  }
  text += summary.exit_code == ExitCode::kPassed   ? "BATCH PASSED\n"
          : summary.exit_code == ExitCode::kFailed ? "BATCH FAILED\n"
                                                   : "BATCH ERRORS: some jobs could not run\n";
  return text;
}

}  // namespace convgate::batch
