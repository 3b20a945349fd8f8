// Every command-line flag is declared once, as a Flag: its spellings, what it does, its default
// (read from the options struct it fills), the forms it accepts (shown in --help and each one
// parsed by a test), and the function that parses, validates and stores a value. Commands compose
// flags in groups (flag_groups.h) into a FlagSet, which registers them with CLI11 and applies the
// values after parsing, before any model loads (Polygraphy's early check; rule 7).
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/backends/backend.h"
#include "convgate/core/status.h"

namespace convgate::cli {

enum class FlagArity {
  kSwitch,    // no value: --json
  kOnce,      // one value; giving it twice is a usage error
  kRepeated,  // any number of values, applied in order: --param, --agreement
  // "VALUE" (every tensor) or "NAME:VALUE" (one), repeatable, at most once per name and once
  // globally: `--atol 1e-3 --atol 1e-4` is a usage error rather than a silent "last one wins".
  kPerName,
};

struct Flag {
  std::string name;                  // "--val-range"; "-o,--output" for a short spelling
  std::vector<std::string> aliases;  // other accepted spellings (Polygraphy's: "--input-shapes")
  std::string value_name;            // "[LO,HI]", "N"; empty for a switch
  std::string help;                  // what it does, one or two sentences
  std::string default_text;          // "1", "600 s" (from the options struct); empty: none
  // Documented forms: shown in --help after "e.g." and each one parsed by flag_help_test.cc.
  std::vector<std::string> examples;
  FlagArity arity = FlagArity::kOnce;
  // Polygraphy spells some lists as several values after one flag
  // (`--input-shapes x:[1,3,224,224] y:[1,10]`): when set, the arguments after the flag's value
  // for which this returns true are further values of the flag (ExpandListFlags).
  std::function<bool(const std::string& arg)> is_list_item;
  // kPerName: the name a value is for ("" = every tensor). Default: the part before the last ':'
  // outside brackets (core/scoped.h); --dim's is the symbol before '='.
  std::function<std::string(const std::string& value)> scope_of;
  // Parses, validates and stores one value ("" for a switch). InvalidArgument quoting the text;
  // the FlagSet prefixes the flag's name.
  std::function<Status(const std::string& value)> apply;
};

// Builders for the common kinds of flag. Each stores into `target` and shows the value `target`
// holds when the flag is declared as the default (so the default comes from the options struct).
// A switch: sets `target` to true.
Flag SwitchFlag(std::string name, std::string help, bool& target);
// Non-empty text, stored as given (paths, names).
Flag TextFlag(std::string name, std::string value_name, std::string help,
              std::vector<std::string> examples, std::string& target);
// An integer in [min, max].
Flag IntegerFlag(std::string name, std::string value_name, std::string help,
                 std::vector<std::string> examples, int64_t min, int64_t max, int& target);
// --ort-optimization and its per-side forms: ONNX Runtime's graph optimization level.
Flag OptimizationFlag(std::string name, std::string whose, backends::GraphOptimization& target);
// The same for one side: unset unless given.
Flag OptimizationFlag(std::string name, std::string whose,
                      std::optional<backends::GraphOptimization>& target);
// An integer in [min, max] for one side: unset unless given (default_text says what applies then).
Flag OptionalIntegerFlag(std::string name, std::string value_name, std::string help,
                         std::string default_text, int64_t min, int64_t max,
                         std::optional<int>& target);
// A duration (core/units.h) in seconds.
Flag DurationFlag(std::string name, std::string help, std::vector<std::string> examples,
                  double& seconds);

// A Flag::apply that stores a non-empty value into `target` (a std::string, a path or an optional
// path); an empty one is refused as "the <what> is empty". `target` must outlive the FlagSet.
template <typename T>
std::function<Status(const std::string&)> StoreNonEmpty(std::string what, T& target) {
  return [what = std::move(what), &target](const std::string& value) -> Status {
    if (value.empty()) return Status::InvalidArgument("the " + what + " is empty");
    target = value;
    return Status::OK();
  };
}

// One spelling of a flag taking Polygraphy-style lists, and how to recognise its items.
struct ListFlag {
  std::string spelling;
  std::function<bool(const std::string& arg)> is_item;
};

// The flags of one command, with the raw values CLI11 collected for them.
class FlagSet {
 public:
  // Flags added after this are listed under `group` in --help ("Inputs", "Tolerances", ...).
  void SetGroup(std::string group) { group_ = std::move(group); }
  void Add(Flag flag);
  void Add(std::vector<Flag> flags);
  // A rule across flags ("--samples has no effect with --load-inputs"), run after every flag
  // applied. Returns InvalidArgument to refuse the command line.
  void AddCheck(std::function<Status(const FlagSet&)> check);

  // Registers every flag as an option of `app` (the help text comes from the Flag). Call once.
  void Register(CLI::App& app);
  // After CLI11 parsed: checks arities, applies every value (flags in the order they were added,
  // values in command-line order), then the cross-flag checks. The first error, with the flag's
  // name as context.
  Status Apply() const;

  // True if the flag (by its main name, "--samples") was given on the command line.
  bool Given(std::string_view name) const;
  // The values given for a flag, in order (empty if not given).
  const std::vector<std::string>& Values(std::string_view name) const;

  // Every spelling of the flags whose values may come as a Polygraphy-style list.
  std::vector<ListFlag> ListFlags() const;

  struct Entry {
    Flag flag;
    std::vector<std::string> values;  // what CLI11 collected, in command-line order
    int64_t switch_count = 0;         // kSwitch only
    std::string group;
    CLI::Option* option = nullptr;
  };
  const std::deque<Entry>& entries() const { return entries_; }

 private:
  const Entry* Find(std::string_view name) const;

  std::deque<Entry> entries_;  // a deque: CLI11 keeps pointers to `values`
  std::string group_ = "Options";
  std::vector<std::function<Status(const FlagSet&)>> checks_;
};

// The text CLI11 shows for a flag: help, "(default: X)", "e.g. A, B", wrapped to fit beside
// CLI11's 30-column names in 100 columns.
std::string FlagDescription(const Flag& flag);

// `text` broken at spaces into lines of at most `width` characters; existing line breaks stay.
std::string WrapText(const std::string& text, size_t width);

// The main long name of a flag: "-o,--output" -> "--output".
std::string LongName(const Flag& flag);

// Polygraphy writes `--input-shapes a:[1,3] b:[1,10]`; CLI11 takes one value per flag occurrence
// (its bracket-list syntax would split "[1,3]"). Rewrites such runs into one occurrence per value:
// `--input-shapes a:[1,3] --input-shapes b:[1,10]`.
std::vector<std::string> ExpandListFlags(const std::vector<std::string>& args,
                                         const std::vector<ListFlag>& list_flags);

}  // namespace convgate::cli
