// `convgate cache ls|prune`: the conversion cache's entries, and pruning by size and age.
#include <chrono>
#include <iostream>

#include "cli/command.h"
#include "convgate/convert/cache.h"
#include "convgate/core/units.h"
#include "convgate/report/conversion.h"

namespace convgate::cli {
namespace {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

nlohmann::json PruneJson(const convert::PruneResult& result, const convert::PruneOptions& options) {
  nlohmann::json removed = nlohmann::json::array();
  for (const convert::CacheEntry& entry : result.removed) {
    removed.push_back(report::CacheEntryJson(entry));
  }
  nlohmann::json in_use = nlohmann::json::array();
  for (const convert::CacheEntry& entry : result.in_use) {
    in_use.push_back(report::CacheEntryJson(entry));
  }
  return {{"dry_run", options.dry_run},
          {"max_bytes", options.max_bytes},
          {"min_age_seconds", options.min_age_seconds},
          {"entries_before", result.entries_before},
          {"bytes_before", result.bytes_before},
          {"bytes_after", result.bytes_after},
          {"removed", removed},
          {"in_use", in_use},
          {"kept_too_young", result.kept_too_young},
          {"stale_work_dirs_removed", result.stale_work_dirs_removed}};
}

std::string PruneText(const convert::PruneResult& result, const convert::PruneOptions& options) {
  std::string text = options.dry_run ? "would remove " : "removed ";
  text += std::to_string(result.removed.size()) + " of " + std::to_string(result.entries_before) +
          " entries: " + FormatBytes(result.bytes_before) + " -> " +
          FormatBytes(result.bytes_after) + " (limit " + FormatBytes(options.max_bytes) +
          ", entries used in the last " + std::to_string(options.min_age_seconds) +
          " s are kept)\n";
  for (const convert::CacheEntry& entry : result.removed) {
    text += "  " + entry.record.key.substr(0, 12) + "  " + FormatBytes(entry.bytes) + "  " +
            entry.record.kind + "  " + entry.record.source_path + "\n";
  }
  for (const convert::CacheEntry& entry : result.in_use) {
    text += "  kept " + entry.record.key.substr(0, 12) + "  " + FormatBytes(entry.bytes) +
            ": in use by another convgate (locked)\n";
  }
  if (result.kept_too_young > 0) {
    text += std::to_string(result.kept_too_young) +
            " entries were kept only because they are younger than the minimum age; the cache "
            "is still over the limit\n";
  }
  return text;
}

constexpr char kCacheExitCodes[] =
    "Exit codes: 0 done; 2 usage error; 3 the cache could not be read or changed; 4 internal "
    "error; 130/143 interrupted by SIGINT/SIGTERM.";

class CacheCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "cache", "List or prune the conversion cache (${CONVGATE_CACHE_DIR:-~/.cache/convgate})");
    app->require_subcommand(1);
    app->footer(kCacheExitCodes);
    ls_ = app->add_subcommand("ls", "List cached conversions, most recently used first");
    ls_->footer(kCacheExitCodes);
    prune_ = app->add_subcommand(
        "prune",
        "Remove least recently used conversions until the cache fits --max-bytes, never one used "
        "within --min-age");
    prune_->footer(kCacheExitCodes);
    const convert::PruneOptions defaults;
    prune_flags_.Add({
        Flag{.name = "--max-bytes",
             .value_name = "SIZE",
             .help = "Size limit",
             .default_text = "CONVGATE_CACHE_MAX_BYTES, else CACHE_CLEANUP_THRESHOLD (GB), else " +
                             FormatBytes(defaults.max_bytes),
             .examples = {"5G", "2GiB", "500MB"},
             .apply = [this](const std::string& value) -> Status {
               CONVGATE_ASSIGN_OR_RETURN(max_bytes_, ParseByteSize(value));
               return Status::OK();
             }},
        Flag{.name = "--min-age",
             .value_name = "DURATION",
             .help = "Never remove entries used more recently than this",
             .default_text = "CONVGATE_CACHE_MIN_AGE_SECONDS, else CACHE_CLEANUP_MIN_AGE_DAYS, "
                             "else " +
                             FormatDuration(static_cast<double>(defaults.min_age_seconds)),
             .examples = {"2d", "12h", "3600"},
             .apply = [this](const std::string& value) -> Status {
               CONVGATE_ASSIGN_OR_RETURN(const double seconds, ParseDuration(value));
               min_age_seconds_ = static_cast<int64_t>(seconds);
               return Status::OK();
             }},
        SwitchFlag("--dry-run", "Say what would be removed, remove nothing", dry_run_),
    });
    for (FlagSet* flags : {&ls_flags_, &prune_flags_}) {
      Flag cache_dir =
          TextFlag("--cache-dir", "DIR", "Cache directory", {"/tmp/convgate-cache"}, cache_dir_);
      cache_dir.default_text = "${CONVGATE_CACHE_DIR:-~/.cache/convgate}";
      flags->Add(std::move(cache_dir));
      AddOutputFlags(*flags, output_, OutputUse::kJson);
    }
    ls_flags_.Register(*ls_);
    prune_flags_.Register(*prune_);
    return app;
  }

  ExitCode Execute(report::Invocation&) override {
    Result<convert::PruneOptions> options = Options();
    if (!options.ok()) return ReportError(gate::Stage::kFlags, options.status());
    std::filesystem::path root = cache_dir_;
    if (root.empty()) {
      Result<std::filesystem::path> dir = convert::DefaultCacheDir();
      if (!dir.ok()) return ReportError(gate::Stage::kFlags, dir.status());
      root = *dir;
    }
    const convert::ConversionCache cache(root);
    return prune_->parsed() ? Prune(cache, *options) : List(cache);
  }

  // `cache` has two subcommands with flags of their own.
  std::vector<const FlagSet*> subcommand_flags() const override {
    return {&ls_flags_, &prune_flags_};
  }
  Status ApplyFlags() const override {
    return prune_->parsed() ? prune_flags_.Apply() : ls_flags_.Apply();
  }

 private:
  // The environment's thresholds (or the defaults), overridden by the flags.
  Result<convert::PruneOptions> Options() const {
    CONVGATE_ASSIGN_OR_RETURN(convert::PruneOptions options, convert::PruneOptionsFromEnv());
    if (max_bytes_) options.max_bytes = *max_bytes_;
    if (min_age_seconds_) options.min_age_seconds = *min_age_seconds_;
    options.dry_run = dry_run_;
    return options;
  }

  ExitCode List(const convert::ConversionCache& cache) const {
    Result<std::vector<convert::CacheEntry>> entries = cache.List();
    if (!entries.ok()) return ReportError(gate::Stage::kLoad, entries.status());
    if (output_.json) {
      nlohmann::json list = nlohmann::json::array();
      for (const convert::CacheEntry& entry : *entries)
        list.push_back(report::CacheEntryJson(entry));
      std::cout << DumpJson({{"cache_dir", cache.root().string()}, {"entries", list}}, output_)
                << "\n";
    } else {
      std::cout << cache.EntriesDir().string() << "\n"
                << report::CacheListText(*entries, NowUnix());
    }
    return ExitCode::kPassed;
  }

  ExitCode Prune(const convert::ConversionCache& cache,
                 const convert::PruneOptions& options) const {
    Result<convert::PruneResult> result = cache.Prune(options);
    if (!result.ok()) return ReportError(gate::Stage::kWrite, result.status());
    std::cout << (output_.json ? DumpJson(PruneJson(*result, options), output_) + "\n"
                               : PruneText(*result, options));
    return ExitCode::kPassed;
  }

  CLI::App* ls_ = nullptr;
  CLI::App* prune_ = nullptr;
  FlagSet ls_flags_;
  FlagSet prune_flags_;
  std::string cache_dir_;
  std::optional<int64_t> max_bytes_;
  std::optional<int64_t> min_age_seconds_;
  bool dry_run_ = false;
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeCacheCommand() { return std::make_unique<CacheCommand>(); }

}  // namespace convgate::cli
