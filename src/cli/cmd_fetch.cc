// `convgate fetch REPO_ID [FILE...]`: files of a Hugging Face Hub repository into the cache
// huggingface_hub shares (hub/hub.h), --check-exists without downloading, --metadata from the API.
#include <chrono>
#include <iostream>

#include "cli/command.h"
#include "convgate/hub/hub.h"

namespace convgate::cli {
namespace {

constexpr char kFetchExitCodes[] =
    "Exit codes: 0 fetched (--check-exists: every FILE exists); 1 --check-exists: a FILE does not "
    "exist; 2 usage error; 3 the hub cannot be reached, refuses, has no such repository or file, "
    "or a download does not match its size or sha256 (twice); 4 internal error.";

nlohmann::json FetchedJson(const hub::FetchedFile& fetched) {
  return {{"file", fetched.file},          {"path", fetched.path.string()},
          {"commit", fetched.commit},      {"etag", fetched.etag},
          {"size", fetched.size},          {"downloaded", fetched.downloaded},
          {"requested", fetched.requested}};
}

nlohmann::json InfoJson(const hub::RepoInfo& info) {
  nlohmann::json files = nlohmann::json::array();
  for (const hub::RepoFile& file : info.files) {
    files.push_back({{"file", file.file},
                     {"size", file.size ? nlohmann::json(*file.size) : nlohmann::json(nullptr)}});
  }
  return {{"repo_id", info.repo_id},
          {"commit", info.commit},
          {"model_type", info.model_type},
          {"architectures", info.architectures},
          {"pipeline_tag", info.pipeline_tag},
          {"license", info.license},
          {"files", files}};
}

std::string OrDash(const std::string& text) { return text.empty() ? "-" : text; }

std::string InfoText(const hub::RepoInfo& info) {
  std::string architectures;
  for (const std::string& name : info.architectures) {
    architectures += (architectures.empty() ? "" : ", ") + name;
  }
  std::string text = "repository:    " + info.repo_id + "\ncommit:        " + info.commit +
                     "\nmodel type:    " + OrDash(info.model_type) +
                     "\narchitectures: " + OrDash(architectures) +
                     "\npipeline tag:  " + OrDash(info.pipeline_tag) +
                     "\nlicense:       " + OrDash(info.license) + "\nfiles:\n";
  for (const hub::RepoFile& file : info.files) {
    text += "  " + file.file + "  " + (file.size ? std::to_string(*file.size) + " B" : "?") + "\n";
  }
  return text;
}

class FetchCommand : public Command {
 public:
  CLI::App* Register(CLI::App& parent) override {
    CLI::App* app = parent.add_subcommand(
        "fetch",
        "Download files of a Hugging Face Hub repository into the cache huggingface_hub uses "
        "(HF_HUB_CACHE) and print their paths; --check-exists and --metadata download nothing. "
        "Endpoint HF_ENDPOINT, token --token, HF_TOKEN or HF_HOME/token, HF_HUB_OFFLINE=1 for the "
        "cache only");
    app->add_option("REPO_ID", repo_id_, "The repository: 'org/name' or 'name'")->required();
    app->add_option("FILE", files_, "Files in the repository (default: every file it lists)");
    app->footer(kFetchExitCodes);
    flags_.Add({
        TextFlag("--revision", "REV", "A branch, tag or commit (default main)",
                 {"main", "v1.0", "0123456789abcdef0123456789abcdef01234567"}, revision_),
        Flag{.name = "--token",
             .value_name = "TOKEN",
             .help = "The hub token (else HF_TOKEN, else the file HF_HOME/token); sent only to "
                     "the endpoint's host, never printed",
             .examples = {"hf_xxx"},
             .apply = StoreNonEmpty("token", token_)},
        SwitchFlag("--check-exists",
                   "Exit 0 if every FILE exists at the revision, 1 if one does not; downloads "
                   "nothing",
                   check_exists_),
        DurationFlag("--timeout",
                     "The whole fetch, every file and retry included; a transfer still running "
                     "then is cut off (exit 3). Default: no limit (each transfer still needs 1 "
                     "KiB/s, CONVGATE_HUB_STALL_TIMEOUT)",
                     {"10m", "1h"}, timeout_seconds_),
        SwitchFlag("--metadata",
                   "Print the model type, architectures, pipeline tag, license, commit and files "
                   "with sizes (the hub's API); downloads nothing",
                   metadata_),
    });
    AddOutputFlags(flags_, output_, OutputUse::kJson);
    return RegisterFlags(app);
  }

  ExitCode Execute(report::Invocation&) override {
    if (Status usage = CheckArguments(); !usage.ok()) {
      return ReportError(gate::Stage::kFlags, usage);
    }
    Result<hub::HubOptions> options = hub::HubOptionsFromEnvironment(token_);
    if (!options.ok()) return ReportError(gate::Stage::kFlags, options.status());
    if (timeout_seconds_ > 0) {
      options->retry.deadline = std::chrono::steady_clock::now() +
                                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(timeout_seconds_));
    }
    if (metadata_) return Metadata(*options);
    if (check_exists_) return CheckExists(*options);
    return Fetch(*options);
  }

 private:
  Status CheckArguments() const {
    CONVGATE_RETURN_IF_ERROR(hub::CheckRepoId(repo_id_));
    CONVGATE_RETURN_IF_ERROR(hub::CheckRevision(revision_));
    for (const std::string& file : files_) CONVGATE_RETURN_IF_ERROR(hub::CheckRepoFile(file));
    if (metadata_ && check_exists_) {
      return Status::InvalidArgument("--metadata and --check-exists do not go together");
    }
    if (metadata_ && !files_.empty()) {
      return Status::InvalidArgument("--metadata lists every file; it takes no FILE");
    }
    if (check_exists_ && files_.empty()) {
      return Status::InvalidArgument("--check-exists needs the FILE to look for");
    }
    return Status::OK();
  }

  ExitCode Metadata(const hub::HubOptions& options) const {
    Result<hub::RepoInfo> info = hub::FetchRepoInfo(options, repo_id_, revision_);
    if (!info.ok()) return ReportError(gate::Stage::kLoad, info.status());
    std::cout << (output_.json ? DumpJson(InfoJson(*info), output_) + "\n"
                               : ForTerminal(InfoText(*info)));
    return ExitCode::kPassed;
  }

  ExitCode CheckExists(const hub::HubOptions& options) const {
    bool all = true;
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& file : files_) {
      Result<bool> exists = hub::FileExists(options, repo_id_, revision_, file);
      if (!exists.ok()) return ReportError(gate::Stage::kLoad, exists.status());
      all = all && *exists;
      list.push_back({{"file", file}, {"exists", *exists}});
      if (!output_.json) {
        std::cout << ForTerminal(file + (*exists ? ": exists" : ": not found") + " in " + repo_id_ +
                                 " at " + revision_ +
                                 (options.offline ? " (HF_HUB_OFFLINE: in the cache)" : ""))
                  << "\n";
      }
    }
    if (output_.json) {
      std::cout << DumpJson({{"repo_id", repo_id_}, {"revision", revision_}, {"files", list}},
                            output_)
                << "\n";
    }
    return all ? ExitCode::kPassed : ExitCode::kFailed;
  }

  ExitCode Fetch(const hub::HubOptions& options) const {
    std::vector<std::string> files = files_;
    if (files.empty() && options.offline) {
      Result<std::vector<std::string>> cached = hub::CachedFiles(options, repo_id_, revision_);
      if (!cached.ok()) return ReportError(gate::Stage::kLoad, cached.status());
      files = std::move(cached).value();
    } else if (files.empty()) {
      Result<hub::RepoInfo> info = hub::FetchRepoInfo(options, repo_id_, revision_);
      if (!info.ok()) return ReportError(gate::Stage::kLoad, info.status());
      for (const hub::RepoFile& file : info->files) files.push_back(file.file);
    }
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& file : files) {
      Result<hub::FetchedFile> fetched = hub::FetchFile(options, repo_id_, revision_, file);
      if (!fetched.ok()) return ReportError(gate::Stage::kLoad, fetched.status());
      if (output_.json) {
        list.push_back(FetchedJson(*fetched));
      } else {
        std::cout << ForTerminal(fetched->path.string()) << "\n";
      }
    }
    if (output_.json) {
      std::cout << DumpJson({{"repo_id", repo_id_}, {"revision", revision_}, {"files", list}},
                            output_)
                << "\n";
    }
    return ExitCode::kPassed;
  }

  std::string repo_id_;
  std::vector<std::string> files_;
  std::string revision_ = "main";
  std::string token_;
  bool check_exists_ = false;
  bool metadata_ = false;
  double timeout_seconds_ = 0;  // 0: no overall deadline
  OutputOptions output_;
};

}  // namespace

std::unique_ptr<Command> MakeFetchCommand() { return std::make_unique<FetchCommand>(); }

}  // namespace convgate::cli
