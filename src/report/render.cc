// Each workflow's forms side by side: which report.json, verify_result.json, junit.xml and
// console text it writes.
#include "convgate/report/render.h"

namespace convgate::report {
namespace {

// Where the hub models came from, where each form has room for it: verify_result.json gains
// "model_origins" (only then: the reference's six fields stay exactly six for local models) and
// the console text a line per model above the table.
void AddModelOrigins(const Invocation& invocation, Rendering& rendering) {
  if (invocation.model_origins.empty()) return;
  rendering.verify_result["model_origins"] = ModelOriginsJson(invocation.model_origins);
  std::string header;
  for (const hub::ModelOrigin& origin : invocation.model_origins) {
    header += "model origin: " + ModelOriginText(origin) + "\n";
  }
  rendering.console = header + rendering.console;
}

// The forms a workflow renders from its own result (run, compare, verify).
template <typename Result>
Rendering RenderOwn(const Result& result, const Invocation& invocation, bool color) {
  Rendering rendering;
  rendering.report = ReportJson(result, invocation);
  rendering.verify_result = VerifyResultJson(result);
  rendering.junit = JUnitXml(result, invocation);
  rendering.console = ConsoleText(result, color);
  rendering.error = result.error;
  rendering.exit_code = gate::ExitCodeFor(result.verdict, result.error);
  AddModelOrigins(invocation, rendering);
  return rendering;
}

}  // namespace

Rendering Render(const gate::RunReport& result, const Invocation& invocation, bool color) {
  return RenderOwn(result, invocation, color);
}

Rendering Render(const gate::CompareReport& result, const Invocation& invocation, bool color) {
  return RenderOwn(result, invocation, color);
}

Rendering Render(const gate::VerifyReport& result, const Invocation& invocation, bool color) {
  Rendering rendering = RenderOwn(result, invocation, color);
  rendering.verify_result_on_usage_error = true;
  return rendering;
}

Rendering Render(const gate::BenchReport& result, const Invocation& invocation, bool color) {
  return RenderOwn(result, invocation, color);
}

Rendering Render(const gate::ReduceReport& result, const Invocation& invocation, bool color) {
  Rendering rendering;
  rendering.report = ReportJson(result, invocation);
  rendering.verify_result = VerifyResultJson(result.comparison);
  rendering.junit = JUnitXml(result.comparison, invocation);
  rendering.console = ConsoleText(result, color);
  rendering.error = result.error;
  rendering.exit_code = gate::ExitCodeFor(result.verdict, result.error);
  AddModelOrigins(invocation, rendering);
  return rendering;
}

Rendering Render(const pipeline::PipelineReport& result, const Invocation& invocation, bool color) {
  Rendering rendering;
  rendering.report = ReportJson(result, invocation);
  rendering.console = ConsoleText(result, color);
  rendering.error = result.error;
  rendering.exit_code = gate::ExitCodeFor(result.verdict, result.error);
  // verify_result.json and junit.xml speak of the pipeline outputs, under the pipeline's verdict.
  if (result.outputs_compared) {
    gate::CompareReport outputs = *result.outputs_compared;
    outputs.inputs = result.data;  // one sample per step
    outputs.verdict = result.verdict;
    outputs.error = result.error;
    rendering.verify_result = VerifyResultJson(outputs);
    rendering.junit = JUnitXml(outputs, invocation);
    return rendering;
  }
  gate::RunReport outputs = result.outputs_sanity;
  outputs.inputs = result.data;
  outputs.model.role = "model";
  outputs.model.path = result.spec;
  outputs.verdict = result.verdict;
  outputs.error = result.error;
  rendering.verify_result = VerifyResultJson(outputs);
  rendering.junit = JUnitXml(outputs, invocation);
  return rendering;
}

}  // namespace convgate::report
