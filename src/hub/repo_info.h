// The answer of /api/models/{repo}: the JSON's fields convgate reports (--metadata).
#pragma once

#include <string>
#include <string_view>

#include "convgate/hub/hub.h"

namespace convgate::hub {

// Reads sha, config.model_type, config.architectures, pipeline_tag, the license (cardData.license,
// else a "license:<id>" tag) and siblings (rfilename, size or lfs.size). Fields absent stay empty.
// DataLoss naming the repository when the text is not a JSON object, or sha or a sibling's name is
// missing or malformed.
Result<RepoInfo> ParseRepoInfo(std::string_view json_text, const std::string& repo_id);

}  // namespace convgate::hub
