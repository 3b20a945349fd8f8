// Reading a conversion's kind-specific parameters (internal to src/convert). Every error is
// InvalidArgument naming the kind, the parameter and the value.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::convert {

using Params = std::map<std::string, std::string>;

// InvalidArgument naming the first parameter not in `known` (and listing those that are).
Status CheckKnownParams(const Params& params, const std::set<std::string>& known,
                        std::string_view kind);

// "1"/"true"/"yes" or "0"/"false"/"no"; `fallback` when absent.
Result<bool> BoolParam(const Params& params, const std::string& name, bool fallback,
                       std::string_view kind);

// A non-negative integer parameter, or nullopt when absent.
Result<std::optional<int64_t>> IntParam(const Params& params, const std::string& name,
                                        std::string_view kind);

// OK when `name` is absent or one of `choices`; otherwise names them.
Status CheckChoice(const Params& params, const std::string& name,
                   std::initializer_list<std::string_view> choices, std::string_view kind);

// The `calibration` parameter of a kind that calibrates activation ranges on samples (an .npz,
// which must exist); verify writes its own inputs there when none is given.
Result<std::string> CalibrationParam(const Params& params, std::string_view kind);

// "a,b, c" -> {"a", "b", "c"}; empty items are dropped.
std::vector<std::string> SplitList(std::string_view text);

}  // namespace convgate::convert
