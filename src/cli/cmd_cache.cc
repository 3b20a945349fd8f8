// `convgate cache ls|prune`: the conversion cache's entries, and pruning by size and age.
#include <chrono>
#include <iostream>

#include "command.h"
#include "convgate/convert/cache.h"
#include "convgate/report/conversion.h"

namespace convgate::cli {
namespace {

int64_t NowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int CacheError(const Status& status) {
  std::cerr << "convgate: error (cache): " << status.message() << "\n";
  return 3;
}

nlohmann::json PruneJson(const convert::PruneResult& result, const convert::PruneOptions& options) {
  nlohmann::json removed = nlohmann::json::array();
  for (const convert::CacheEntry& entry : result.removed) {
    removed.push_back(report::CacheEntryJson(entry));
  }
  return {{"dry_run", options.dry_run},
          {"max_bytes", options.max_bytes},
          {"min_age_seconds", options.min_age_seconds},
          {"entries_before", result.entries_before},
          {"bytes_before", result.bytes_before},
          {"bytes_after", result.bytes_after},
          {"removed", removed},
          {"kept_too_young", result.kept_too_young},
          {"stale_work_dirs_removed", result.stale_work_dirs_removed}};
}

std::string PruneText(const convert::PruneResult& result, const convert::PruneOptions& options) {
  std::string text = options.dry_run ? "would remove " : "removed ";
  text += std::to_string(result.removed.size()) + " of " + std::to_string(result.entries_before) +
          " entries: " + report::FormatBytes(result.bytes_before) + " -> " +
          report::FormatBytes(result.bytes_after) + " (limit " +
          report::FormatBytes(options.max_bytes) + ", entries used in the last " +
          std::to_string(options.min_age_seconds) + " s are kept)\n";
  for (const convert::CacheEntry& entry : result.removed) {
    text += "  " + entry.record.key.substr(0, 12) + "  " + report::FormatBytes(entry.bytes) + "  " +
            entry.record.kind + "  " + entry.record.source_path + "\n";
  }
  if (result.kept_too_young > 0) {
    text += std::to_string(result.kept_too_young) +
            " entries were kept only because they are younger than the minimum age; the cache "
            "is still over the limit\n";
  }
  return text;
}

class CacheCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "cache", "List or prune the conversion cache (${CONVGATE_CACHE_DIR:-~/.cache/convgate})");
    app->require_subcommand(1);
    ls_ = app->add_subcommand("ls", "List cached conversions, most recently used first");
    prune_ = app->add_subcommand(
        "prune",
        "Remove least recently used conversions until the cache fits --max-bytes, never one used "
        "within --min-age (defaults: CONVGATE_CACHE_MAX_BYTES or 10G, "
        "CONVGATE_CACHE_MIN_AGE_SECONDS or 1d)");
    prune_->add_option("--max-bytes", max_bytes_, "Size limit: bytes, or with K/M/G/T");
    prune_->add_option("--min-age", min_age_,
                       "Never remove entries used more recently: seconds, "
                       "or with s/m/h/d");
    prune_->add_flag("--dry-run", dry_run_, "Say what would be removed, remove nothing");
    for (CLI::App* sub : {ls_, prune_}) {
      sub->add_option("--cache-dir", cache_dir_, "Cache directory (default as above)");
      sub->add_flag("--json", json_, "Print JSON");
    }
    return app;
  }

  int Execute(report::Invocation&) override {
    Result<convert::PruneOptions> options = Options();
    if (!options.ok()) return UsageError(options.status());
    std::filesystem::path root = cache_dir_;
    if (root.empty()) {
      Result<std::filesystem::path> dir = convert::DefaultCacheDir();
      if (!dir.ok()) return UsageError(dir.status());
      root = *dir;
    }
    const convert::ConversionCache cache(root);
    return prune_->parsed() ? Prune(cache, *options) : List(cache);
  }

 private:
  // The environment's thresholds (or the defaults), overridden by the flags.
  Result<convert::PruneOptions> Options() const {
    CONVGATE_ASSIGN_OR_RETURN(convert::PruneOptions options, convert::PruneOptionsFromEnv());
    if (!max_bytes_.empty()) {
      Result<int64_t> bytes = convert::ParseByteSize(max_bytes_);
      if (!bytes.ok()) return bytes.status().WithContext("--max-bytes");
      options.max_bytes = *bytes;
    }
    if (!min_age_.empty()) {
      Result<int64_t> seconds = convert::ParseDuration(min_age_);
      if (!seconds.ok()) return seconds.status().WithContext("--min-age");
      options.min_age_seconds = *seconds;
    }
    options.dry_run = dry_run_;
    return options;
  }

  int List(const convert::ConversionCache& cache) const {
    Result<std::vector<convert::CacheEntry>> entries = cache.List();
    if (!entries.ok()) return CacheError(entries.status());
    if (json_) {
      nlohmann::json list = nlohmann::json::array();
      for (const convert::CacheEntry& entry : *entries)
        list.push_back(report::CacheEntryJson(entry));
      std::cout << nlohmann::json{{"cache_dir", cache.root().string()}, {"entries", list}}.dump(2)
                << "\n";
    } else {
      std::cout << cache.EntriesDir().string() << "\n"
                << report::CacheListText(*entries, NowUnix());
    }
    return 0;
  }

  int Prune(const convert::ConversionCache& cache, const convert::PruneOptions& options) const {
    Result<convert::PruneResult> result = cache.Prune(options);
    if (!result.ok()) return CacheError(result.status());
    std::cout << (json_ ? PruneJson(*result, options).dump(2) + "\n" : PruneText(*result, options));
    return 0;
  }

  CLI::App* ls_ = nullptr;
  CLI::App* prune_ = nullptr;
  std::string cache_dir_;
  std::string max_bytes_;
  std::string min_age_;
  bool dry_run_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeCacheCommand() { return std::make_unique<CacheCommand>(); }

}  // namespace convgate::cli
