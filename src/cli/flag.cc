#include "cli/flag.h"

#include <algorithm>
#include <map>

#include "convgate/core/numbers.h"
#include "convgate/core/scoped.h"
#include "convgate/core/units.h"

namespace convgate::cli {
namespace {

std::vector<std::string> SplitNames(const std::string& names) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= names.size()) {
    const size_t comma = std::min(names.find(',', begin), names.size());
    parts.push_back(names.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return parts;
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string joined;
  for (const std::string& item : items) {
    if (!joined.empty()) joined += separator;
    joined += item;
  }
  return joined;
}

// kPerName: one value per name (and one global value) on the command line.
Status CheckOncePerName(const std::string& flag, const Flag& spec,
                        const std::vector<std::string>& values) {
  std::map<std::string, std::string> seen;  // name ("" = global) -> the first value
  for (const std::string& value : values) {
    const std::string name = spec.scope_of ? spec.scope_of(value) : SplitScoped(value).name;
    const auto [first, inserted] = seen.emplace(name, value);
    if (inserted) continue;
    const std::string whom = name.empty() ? "globally" : "for '" + name + "'";
    return Status::InvalidArgument(flag + " is given twice " + whom + " ('" + first->second +
                                   "' and '" + value + "'): give one value per name");
  }
  return Status::OK();
}

}  // namespace

Flag SwitchFlag(std::string name, std::string help, bool& target) {
  return Flag{.name = std::move(name),
              .help = std::move(help),
              .arity = FlagArity::kSwitch,
              .apply = [&target](const std::string&) {
                target = true;
                return Status::OK();
              }};
}

Flag TextFlag(std::string name, std::string value_name, std::string help,
              std::vector<std::string> examples, std::string& target) {
  return Flag{.name = std::move(name),
              .value_name = std::move(value_name),
              .help = std::move(help),
              .examples = std::move(examples),
              .apply = StoreNonEmpty("value", target)};
}

Flag IntegerFlag(std::string name, std::string value_name, std::string help,
                 std::vector<std::string> examples, int64_t min, int64_t max, int& target) {
  return Flag{.name = std::move(name),
              .value_name = std::move(value_name),
              .help = std::move(help),
              .default_text = std::to_string(target),
              .examples = std::move(examples),
              .apply = [&target, min, max](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(const int64_t parsed, ParseInteger(value, min, max));
                target = static_cast<int>(parsed);
                return Status::OK();
              }};
}

Flag OptionalIntegerFlag(std::string name, std::string value_name, std::string help,
                         std::string default_text, int64_t min, int64_t max,
                         std::optional<int>& target) {
  return Flag{.name = std::move(name),
              .value_name = std::move(value_name),
              .help = std::move(help),
              .default_text = std::move(default_text),
              .examples = {"1", "4"},
              .apply = [&target, min, max](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(const int64_t parsed, ParseInteger(value, min, max));
                target = static_cast<int>(parsed);
                return Status::OK();
              }};
}

Flag DurationFlag(std::string name, std::string help, std::vector<std::string> examples,
                  double& seconds) {
  return Flag{.name = std::move(name),
              .value_name = "DURATION",
              .help = std::move(help),
              .default_text = FormatDuration(seconds),
              .examples = std::move(examples),
              .apply = [&seconds](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(seconds, ParseDuration(value));
                return Status::OK();
              }};
}

std::string LongName(const Flag& flag) {
  for (const std::string& part : SplitNames(flag.name)) {
    if (part.rfind("--", 0) == 0) return part;
  }
  return flag.name;
}

std::string WrapText(const std::string& text, size_t width) {
  std::string wrapped;
  size_t line_start = 0;  // in `wrapped`
  size_t last_space = std::string::npos;
  for (const char c : text) {
    if (c == '\n') {
      wrapped += c;
      line_start = wrapped.size();
      last_space = std::string::npos;
      continue;
    }
    if (c == ' ') last_space = wrapped.size();
    wrapped += c;
    if (wrapped.size() - line_start > width && last_space != std::string::npos &&
        last_space > line_start) {
      wrapped[last_space] = '\n';
      line_start = last_space + 1;
      last_space = std::string::npos;
    }
  }
  return wrapped;
}

std::string FlagDescription(const Flag& flag) {
  std::string text = flag.help;
  if (!flag.default_text.empty()) text += " (default: " + flag.default_text + ")";
  if (!flag.examples.empty()) {
    std::vector<std::string> shown;
    for (const std::string& example : flag.examples)
      shown.push_back(LongName(flag) + " " + example);
    text += "; e.g. " + Join(shown, ", ");
  }
  // CLI11 prints names in 30 columns; 70 more keeps a line within 100.
  return WrapText(text, 70);
}

void FlagSet::Add(Flag flag) { entries_.push_back(Entry{std::move(flag), {}, 0, group_, nullptr}); }

void FlagSet::Add(std::vector<Flag> flags) {
  for (Flag& flag : flags) Add(std::move(flag));
}

void FlagSet::AddCheck(std::function<Status(const FlagSet&)> check) {
  checks_.push_back(std::move(check));
}

void FlagSet::Register(CLI::App& app) {
  for (Entry& entry : entries_) {
    const Flag& flag = entry.flag;
    std::string names = flag.name;
    for (const std::string& alias : flag.aliases) names += "," + alias;
    if (flag.arity == FlagArity::kSwitch) {
      entry.option =
          app.add_flag(names, entry.switch_count, FlagDescription(flag))->group(entry.group);
      continue;
    }
    // One value per occurrence, and no CLI11 list syntax: "[0,1]" is one value, not two. Every
    // occurrence is kept, so that Apply can say "given twice" in its own words.
    entry.option = app.add_option(names, entry.values, FlagDescription(flag))
                       ->type_name(flag.value_name)
                       ->allow_extra_args(false)
                       ->group(entry.group);
    if (flag.arity == FlagArity::kOnce) {
      entry.option->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
  }
}

Status FlagSet::Apply() const {
  for (const Entry& entry : entries_) {
    const Flag& flag = entry.flag;
    const std::string name = LongName(flag);
    if (flag.arity == FlagArity::kSwitch) {
      if (entry.switch_count > 0) CONVGATE_RETURN_IF_ERROR(flag.apply("").WithContext(name));
      continue;
    }
    if (flag.arity == FlagArity::kOnce && entry.values.size() > 1) {
      return Status::InvalidArgument(name + " is given " + std::to_string(entry.values.size()) +
                                     " times ('" + Join(entry.values, "', '") + "'): give it once");
    }
    if (flag.arity == FlagArity::kPerName) {
      CONVGATE_RETURN_IF_ERROR(CheckOncePerName(name, flag, entry.values));
    }
    for (const std::string& value : entry.values) {
      CONVGATE_RETURN_IF_ERROR(flag.apply(value).WithContext(name));
    }
  }
  for (const auto& check : checks_) CONVGATE_RETURN_IF_ERROR(check(*this));
  return Status::OK();
}

const FlagSet::Entry* FlagSet::Find(std::string_view name) const {
  for (const Entry& entry : entries_) {
    if (LongName(entry.flag) == name) return &entry;
  }
  return nullptr;
}

bool FlagSet::Given(std::string_view name) const {
  const Entry* entry = Find(name);
  if (entry == nullptr) return false;
  return entry->flag.arity == FlagArity::kSwitch ? entry->switch_count > 0 : !entry->values.empty();
}

const std::vector<std::string>& FlagSet::Values(std::string_view name) const {
  static const std::vector<std::string> kNone;
  const Entry* entry = Find(name);
  return entry == nullptr ? kNone : entry->values;
}

std::vector<ListFlag> FlagSet::ListFlags() const {
  std::vector<ListFlag> list_flags;
  for (const Entry& entry : entries_) {
    if (!entry.flag.is_list_item) continue;
    std::vector<std::string> spellings = SplitNames(entry.flag.name);
    spellings.insert(spellings.end(), entry.flag.aliases.begin(), entry.flag.aliases.end());
    for (std::string& spelling : spellings) {
      list_flags.push_back(ListFlag{std::move(spelling), entry.flag.is_list_item});
    }
  }
  return list_flags;
}

std::vector<std::string> ExpandListFlags(const std::vector<std::string>& args,
                                         const std::vector<ListFlag>& list_flags) {
  std::vector<std::string> expanded;
  for (size_t idx = 0; idx < args.size(); ++idx) {
    const std::string flag = args[idx];
    expanded.push_back(flag);
    const auto list = std::find_if(list_flags.begin(), list_flags.end(),
                                   [&](const ListFlag& entry) { return entry.spelling == flag; });
    if (list == list_flags.end() || idx + 1 >= args.size()) continue;
    expanded.push_back(args[++idx]);  // the flag's own value, whatever it looks like
    while (idx + 1 < args.size() && list->is_item(args[idx + 1])) {
      expanded.push_back(flag);
      expanded.push_back(args[++idx]);
    }
  }
  return expanded;
}

namespace {

Result<backends::GraphOptimization> ParseOptimization(const std::string& value) {
  for (auto level : {backends::GraphOptimization::kDisabled, backends::GraphOptimization::kBasic,
                     backends::GraphOptimization::kExtended, backends::GraphOptimization::kAll}) {
    if (value == backends::GraphOptimizationName(level)) return level;
  }
  return Status::InvalidArgument("'" + value + "' is not a level: disabled, basic, extended, all");
}

Flag OptimizationFlagOf(std::string name, std::string whose, std::string default_text,
                        std::function<void(backends::GraphOptimization)> store) {
  return Flag{.name = std::move(name),
              .value_name = "LEVEL",
              .help = "ONNX Runtime's graph optimization level for " + whose +
                      ": disabled, basic, extended (every fusion) or all (also the NCHWc layout "
                      "pass ORT's own default runs, which copies every Conv weight: about twice "
                      "the load time and memory)",
              .default_text = std::move(default_text),
              .examples = {"all", "disabled"},
              .apply = [store = std::move(store)](const std::string& value) -> Status {
                CONVGATE_ASSIGN_OR_RETURN(backends::GraphOptimization level,
                                          ParseOptimization(value));
                store(level);
                return Status::OK();
              }};
}

}  // namespace

Flag OptimizationFlag(std::string name, std::string whose, backends::GraphOptimization& target) {
  return OptimizationFlagOf(std::move(name), std::move(whose),
                            backends::GraphOptimizationName(target),
                            [&target](backends::GraphOptimization level) { target = level; });
}

Flag OptimizationFlag(std::string name, std::string whose,
                      std::optional<backends::GraphOptimization>& target) {
  return OptimizationFlagOf(std::move(name), std::move(whose), "--ort-optimization's",
                            [&target](backends::GraphOptimization level) { target = level; });
}

}  // namespace convgate::cli
