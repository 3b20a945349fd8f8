// --data text: one text per line, tokenized by a Hugging Face tokenizer.json through the pinned
// `tokenizers` package in the project's venv (runtime/tokenize_text.py): the same tokenizer the
// model was exported with, special tokens and all, rather than a reimplementation of it.
#include <nlohmann/json.hpp>
#include <optional>

#include "convgate/core/file_util.h"
#include "convgate/core/install_layout.h"
#include "convgate/core/python_env.h"
#include "convgate/core/subprocess.h"
#include "convgate/core/temp_dir.h"
#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

// Tokenizing a file of text lines takes well under a second; a minute means something is stuck.
constexpr double kTokenizeTimeoutSeconds = 60.0;

struct Tokenized {
  std::vector<std::vector<int64_t>> sequences;
  std::optional<int64_t> pad_id;  // the tokenizer's, if it has one
};

Result<Tokenized> Tokenize(const std::filesystem::path& tokenizer,
                           const std::filesystem::path& text) {
  CONVGATE_ASSIGN_OR_RETURN(std::filesystem::path python, VenvPython());
  CONVGATE_ASSIGN_OR_RETURN(TempDir temp, TempDir::Create("tokenize"));
  const std::filesystem::path out = temp.path() / "ids.jsonl";
  const std::filesystem::path script =
      RuntimeScript("tokenize_text.py", "CONVGATE_TOKENIZE_SCRIPT");
  SubprocessOptions options;
  options.timeout_seconds = kTokenizeTimeoutSeconds;
  CONVGATE_ASSIGN_OR_RETURN(SubprocessResult ran,
                            RunSubprocess({python.string(), script.string(), tokenizer.string(),
                                           text.string(), out.string()},
                                          options));
  if (!ran.succeeded()) {
    std::string why = ran.stderr_tail;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return Status::DataLoss("tokenizing " + text.string() + " with " + tokenizer.string() + ": " +
                            (why.empty() ? "the tokenizer " + ran.Describe() : why));
  }
  CONVGATE_ASSIGN_OR_RETURN(std::string lines, ReadFile(out));
  Tokenized tokenized;
  for (const Line& text_line : NonBlankLines(lines)) {
    const nlohmann::json line = nlohmann::json::parse(text_line.text, nullptr, false);
    if (!line.is_discarded() && line.contains("pad_id")) {
      if (line["pad_id"].is_number_integer()) tokenized.pad_id = line["pad_id"].get<int64_t>();
      continue;
    }
    if (line.is_discarded() || !line.contains("ids")) {
      return Status::Internal("tokenize_text.py wrote a line that is not {\"ids\": [...]}");
    }
    tokenized.sequences.push_back(line["ids"].get<std::vector<int64_t>>());
  }
  return tokenized;
}

}  // namespace

Result<Rows> LoadTextRows(const DataSpec& spec, const InputPlan& plan, const TokenOptions& options,
                          const Limits& limits) {
  CONVGATE_RETURN_IF_ERROR(CheckTokenInput(plan, "text"));
  if (options.tokenizer.empty()) {
    return Status::InvalidArgument(
        "--data text: no tokenizer.json beside the model: give one with --tokenizer PATH");
  }
  const std::filesystem::path tokenizer = options.tokenizer;
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files,
                            ListDataFiles(spec.path, {".txt"}, "text"));
  Rows rows;
  // The tokenizer decides the ids as much as the text does: it is recorded beside the text.
  CONVGATE_RETURN_IF_ERROR(ReadDataFile(tokenizer, plan.info->name, limits, rows.files).status());
  std::vector<std::vector<int64_t>> sequences;
  TokenOptions padding = options;
  for (const std::filesystem::path& file : files) {
    CONVGATE_RETURN_IF_ERROR(ReadDataFile(file, plan.info->name, limits, rows.files).status());
    CONVGATE_ASSIGN_OR_RETURN(Tokenized read, Tokenize(tokenizer, file));
    for (auto& ids : read.sequences) sequences.push_back(std::move(ids));
    if (!padding.pad_id) padding.pad_id = read.pad_id;  // --pad-id wins
  }
  if (sequences.empty()) return Status::DataLoss("--data " + spec.path + " holds no text lines");
  CONVGATE_RETURN_IF_ERROR(SequencesToRows(
      std::move(sequences), plan, padding,
      "text line(s) from " + spec.path + " tokenized by " + tokenizer.string(), rows));
  return rows;
}

}  // namespace convgate::loaders
