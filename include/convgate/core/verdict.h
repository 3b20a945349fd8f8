// A gate's verdict, as every layer spells it: the workflows decide it, reports and result files
// write it ("pass", "fail", "error"), batch and the stores keep it per job.
#pragma once

#include <optional>
#include <string_view>

namespace convgate {

enum class Verdict { kPass, kFail, kError };

std::string_view VerdictName(Verdict verdict);  // "pass", "fail", "error"
// The verdict a file spells `name` (VerdictName's inverse); nullopt for anything else.
std::optional<Verdict> ParseVerdict(std::string_view name);

}  // namespace convgate
