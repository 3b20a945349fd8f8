// Every command's --help, walked: each flag it lists parses in every form the help documents (its
// "e.g." examples and its aliases), exactly as the binary parses a command line (CommandLine is
// what main() runs). This is what keeps `--val-range [0,1]` from being split by CLI11 again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <regex>

#include "cli/command_line.h"
#include "convgate/core/command_line.h"

namespace convgate::cli {
namespace {

// What makes each command line complete apart from the flag under test. A pair whose flag is the
// one under test is dropped (so --to is tested without the base's --to).
const std::map<std::string, std::vector<std::string>>& BaseArguments() {
  static const std::map<std::string, std::vector<std::string>> kBase = {
      {"inspect", {"model.onnx"}},
      {"run", {"model.onnx"}},
      {"compare", {"a.onnx", "b.onnx"}},
      {"verify", {"a.onnx", "--to", "fp16"}},
      {"check", {"report.json"}},
      {"report", {"results/"}},
      {"convert", {"model.onnx", "--to", "fp16", "-o", "out.onnx"}},
      {"cache ls", {}},
      {"cache prune", {}},
      {"transform", {"model.onnx", "--pass", "fold_batchnorm", "-o", "out.onnx", "--validate"}},
      {"reduce", {"a.onnx", "b.onnx", "-o", "bug"}},
      {"repair", {"a.onnx", "--to", "fp16", "-o", "repaired.onnx"}},
      {"bench", {"a.onnx", "b.onnx"}},
      {"batch", {"manifest.yaml"}},
      {"history", {}},
      {"fetch", {"org/tiny", "model.onnx"}},
      {"docs", {"reference"}},
      {"pipeline", {"pipe.yaml"}},
  };
  return kBase;
}

// Flags that only mean something beside another one.
const std::map<std::string, std::vector<std::string>>& Prerequisites() {
  static const std::map<std::string, std::vector<std::string>> kNeeds = {
      {"--strict", {"--per-node"}},
      {"--warmup", {"--benchmark"}},
      {"--iterations", {"--benchmark"}},
      {"--bench-time", {"--benchmark"}},
      {"--streams", {"--benchmark"}},
      {"--min-speedup", {"--benchmark"}},
      {"--max-slowdown", {"--benchmark"}},
      {"--cpus", {"--benchmark"}},
      {"--source-cpus", {"--benchmark"}},
      {"--target-cpus", {"--benchmark"}},
      {"--memory-budget", {"--per-node"}},
      {"--local-error", {"--per-node"}},
      {"--tasks", {"--slurm"}},
      {"--sbatch-arg", {"--slurm"}},
      {"--no-wait", {"--slurm"}},
      {"--id", {"--store", "results/convgate.db"}},
      {"--since", {"--store", "results/convgate.db"}},
      {"--run", {"--store", "results/convgate.db"}},
      {"--skip-errors", {"--resume"}},
      {"--resize", {"--data", "image:photos/"}},
      {"--resize-mode", {"--data", "image:photos/"}},
      {"--color-order", {"--data", "image:photos/"}},
      {"--image-layout", {"--data", "image:photos/"}},
      {"--normalize", {"--data", "image:photos/"}},
      {"--pixel-scale", {"--data", "image:photos/"}},
      {"--sample-rate", {"--data", "audio:clips/"}},
      {"--pad-id", {"--data", "tokens:ids.jsonl"}},
      {"--tokenizer", {"--data", "text:sentences.txt"}},
  };
  return kNeeds;
}

// Flags that replace a base argument: testing --load-outputs drops SOURCE, --converter and
// --target drop --to.
std::vector<std::string> Without(std::vector<std::string> args, const std::string& flag,
                                 const std::string& command) {
  std::vector<std::string> dropped = {flag};
  if (flag == "--converter" || flag == "--target") dropped.push_back("--to");
  if (flag == "--output") dropped.push_back("-o");
  for (const std::string& name : dropped) {
    auto found = std::find(args.begin(), args.end(), name);
    if (found != args.end() && found + 1 != args.end()) args.erase(found, found + 2);
  }
  if (flag == "--load-outputs" && command == "compare") args.erase(args.begin());
  return args;
}

std::string CollapseSpaces(const std::string& text) {
  return std::regex_replace(text, std::regex("\\s+"), " ");
}

struct Case {
  std::string command;  // "cache prune" for a subcommand's subcommand
  const FlagSet* flags;
  std::string help;  // that command's --help, whitespace collapsed
};

std::vector<Case> Cases(CommandLine& command_line) {
  std::vector<Case> cases;
  for (const auto& [sub, command] : command_line.commands()) {
    const std::vector<const FlagSet*> sets = command->subcommand_flags();
    if (sets.size() == 1) {
      cases.push_back({sub->get_name(), sets.front(), CollapseSpaces(sub->help())});
      continue;
    }
    const std::vector<CLI::App*> subs = sub->get_subcommands({});
    for (size_t idx = 0; idx < sets.size() && idx < subs.size(); ++idx) {
      cases.push_back({sub->get_name() + " " + subs[idx]->get_name(), sets[idx],
                       CollapseSpaces(subs[idx]->help())});
    }
  }
  return cases;
}

// Parses `convgate COMMAND BASE... FLAG VALUE` with a fresh command line.
Status ParseWith(const std::string& command, const std::string& flag,
                 const std::vector<std::string>& spelled) {
  std::vector<std::string> args;
  for (size_t begin = 0; begin <= command.size();) {
    const size_t space = std::min(command.find(' ', begin), command.size());
    args.push_back(command.substr(begin, space - begin));
    begin = space + 1;
  }
  const std::vector<std::string> base = Without(BaseArguments().at(command), flag, command);
  args.insert(args.end(), base.begin(), base.end());
  auto needs = Prerequisites().find(flag);
  // reduce is always per-node; pipeline's --strict gates on nodes without --per-node.
  const bool per_node = needs != Prerequisites().end() && needs->second.front() == "--per-node";
  // bench always benchmarks.
  const bool benchmark = needs != Prerequisites().end() && needs->second.front() == "--benchmark";
  const bool implied = (command == "reduce" && per_node) ||
                       (command == "pipeline" && flag == "--strict") ||
                       (command == "bench" && benchmark);
  if (needs != Prerequisites().end() && !implied) {
    args.insert(args.end(), needs->second.begin(), needs->second.end());
  }
  // compare's --steps and --set belong to its --feedback loop.
  if (command == "compare" && (flag == "--steps" || flag == "--set")) {
    args.insert(args.end(), {"--feedback", "h_out=h"});
  }
  args.insert(args.end(), spelled.begin(), spelled.end());
  CommandLine command_line;
  return command_line.Parse(args).status();
}

class FlagHelpTest : public ::testing::Test {
 protected:
  // --policy's example names a file in the source tree.
  void SetUp() override { ASSERT_EQ(::chdir(CONVGATE_SOURCE_DIR), 0); }
};

TEST_F(FlagHelpTest, EveryDocumentedFormOfEveryFlagParses) {
  CommandLine command_line;
  int forms = 0;
  for (const Case& c : Cases(command_line)) {
    ASSERT_TRUE(BaseArguments().count(c.command)) << "no base arguments for " << c.command;
    EXPECT_TRUE(ParseWith(c.command, "", {}).ok())
        << c.command << ": " << ParseWith(c.command, "", {}).message();
    for (const FlagSet::Entry& entry : c.flags->entries()) {
      const Flag& flag = entry.flag;
      const std::string name = LongName(flag);
      EXPECT_NE(c.help.find(name), std::string::npos) << c.command << " --help lacks " << name;
      if (flag.arity == FlagArity::kSwitch) {
        Status parsed = ParseWith(c.command, name, {name});
        EXPECT_TRUE(parsed.ok()) << c.command << " " << name << ": " << parsed.message();
        ++forms;
        continue;
      }
      ASSERT_FALSE(flag.examples.empty()) << c.command << " " << name << " documents no form";
      std::vector<std::string> spellings = {name};
      spellings.insert(spellings.end(), flag.aliases.begin(), flag.aliases.end());
      for (const std::string& example : flag.examples) {
        EXPECT_NE(c.help.find(name + " " + example), std::string::npos)
            << c.command << " --help does not show " << name << " " << example;
        // The value as a shell hands it over ('...' quoting removed).
        Result<std::vector<std::string>> words = SplitCommandLine(example);
        ASSERT_TRUE(words.ok() && words->size() == 1) << example;
        for (const std::string& spelling : spellings) {
          for (const std::vector<std::string>& form :
               {std::vector<std::string>{spelling, words->front()},
                std::vector<std::string>{spelling + "=" + words->front()}}) {
            if (spelling.rfind("--", 0) != 0 && form.size() == 1) continue;  // -o=x is not a form
            Status parsed = ParseWith(c.command, name, form);
            EXPECT_TRUE(parsed.ok())
                << "convgate " << c.command << " " << form.front() << (form.size() > 1 ? " " : "")
                << (form.size() > 1 ? form.back() : "") << ": " << parsed.message();
            ++forms;
          }
        }
      }
    }
  }
  std::cout << forms << " documented flag forms parsed\n";
  EXPECT_GT(forms, 200);
}

TEST_F(FlagHelpTest, PolygraphyListsTakeSeveralValuesAfterOneFlag) {
  EXPECT_TRUE(ParseWith("compare", "",
                        {"--input-shapes", "x:[1,3,48,192]", "mask:[1,48]", "--samples", "2"})
                  .ok());
  // An argument that is not NAME:SHAPE ends the list: here, the TARGET.
  CommandLine command_line;
  EXPECT_TRUE(
      command_line.Parse({"compare", "a.onnx", "--input-shapes", "x:[1,3]", "b.onnx"}).ok());
  // Two values for one input are two values, not a list quirk.
  Status twice = ParseWith("compare", "", {"--input-shapes", "x:[1,3]", "x:[1,4]"});
  EXPECT_NE(twice.message().find("--shape is given twice for 'x'"), std::string::npos)
      << twice.message();
}

TEST_F(FlagHelpTest, AFlagGivenTwiceForOneNameIsRefused) {
  for (const auto& [flag, first, second] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--atol", "1e-3", "1e-4"},
           {"--atol", "logits:1e-3", "logits:1e-4"},
           {"--val-range", "x:[0,1]", "x:[0,2]"},
           {"--dim", "batch=2", "batch=4"},
           {"--seed", "1", "2"},
           {"--samples", "1", "2"}}) {
    Status parsed = ParseWith("compare", "", {flag, first, flag, second});
    EXPECT_EQ(parsed.code(), StatusCode::kInvalidArgument) << flag;
    EXPECT_NE(parsed.message().find(flag + " is given"), std::string::npos) << parsed.message();
  }
  // One value per name is fine: a global value and per-output ones.
  EXPECT_TRUE(
      ParseWith("compare", "", {"--atol", "1e-3", "--atol", "logits:1e-4", "--atol", "probs:1"})
          .ok());
}

TEST_F(FlagHelpTest, NumbersAreCheckedWithoutWrapAroundOrNoise) {
  Status seed = ParseWith("compare", "", {"--seed", "-1"});
  EXPECT_EQ(seed.message(), "--seed: '-1' is not an integer in [0, 18446744073709551615]");
  Status margin = ParseWith("compare", "", {"--flip-margin", "-1"});
  EXPECT_EQ(margin.message(), "--flip-margin: '-1' is not a finite number >= 0");
  EXPECT_FALSE(ParseWith("compare", "", {"--samples", "0"}).ok());
  EXPECT_FALSE(ParseWith("compare", "", {"--threads", "1.5"}).ok());
}

}  // namespace
}  // namespace convgate::cli
