// The reports people read beside report.json: one self-contained HTML page (inline SVG charts, no
// network, readable without JavaScript) and a short Markdown summary for CI systems. Both are
// drawn from report.json documents (any command's, verify's comparison inside it, or a batch's
// summary.json), so `convgate report` renders saved results exactly as the commands do.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace convgate::report {

// One page for all of `reports` (a section each): the verdict, sides, policy and inputs; per
// output the statistics table, an error distribution per decade with the tolerance marked, the
// worst element and the hints; agreement with a confusion heatmap; per-node runs as a divergence
// curve (max and p99 |diff| per node, the tolerance line, first divergence, culprit and NaN
// origin marked) with a sortable node table; benchmark figures; for a batch summary a grid of
// models by conversion linking each job's report, and the errors by category. Never fails: a
// field a report lacks is left out.
std::string RenderHtml(const std::vector<nlohmann::json>& reports);

// The verdict, sides, a table of the failing outputs (worst sample each: max abs diff,
// mismatches, the atol and rtol that would pass), the per-node culprit and the hints; a batch
// summary's entries that did not pass. At most 10 rows per table: one model stays under 60 lines.
std::string RenderMarkdown(const std::vector<nlohmann::json>& reports);

}  // namespace convgate::report
