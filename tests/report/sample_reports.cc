#include "sample_reports.h"

#include <cmath>
#include <string>
#include <vector>

#include "convgate/compare/tensor_compare.h"

namespace convgate::report::sample_reports {
namespace {

gate::SideRecord Side(const std::string& role, const std::string& path) {
  gate::SideRecord side;
  side.role = role;
  side.path = path;
  side.kind = "model";
  side.format = "onnx";
  side.backend = "ort";
  side.backend_version = "1.29.0";
  side.sha256 = std::string(64, role == "source" ? 'a' : 'b');
  side.load_seconds = 0.125;
  side.run_seconds = 0.5;
  side.output_names = {"logits", "boxes"};
  return side;
}

Tensor Floats(std::vector<float> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, count}), std::move(values));
}

gate::OutputCheck Check(int sample, const std::string& output, const std::vector<float>& source,
                        const std::vector<float>& target) {
  gate::OutputCheck check;
  check.sample = sample;
  check.output = output;
  // The policy's defaults (float32: atol 1e-5, rtol 1e-3), as the report's policy says.
  check.comparison = compare::CompareTensors(Floats(source), Floats(target), check.tolerance);
  check.passed = check.comparison->passed;
  check.failures = check.comparison->failures;
  check.mismatches = {check.comparison->mismatches, check.comparison->mismatches};
  if (!check.passed) check.hints = {"add --per-node to find the node where the NaN appears"};
  return check;
}

}  // namespace

// Two samples of two outputs: logits always within tolerance, boxes off by 0.05 at one element
// of sample 1 and NaN at another.
gate::CompareReport Comparison() {
  gate::CompareReport report;
  report.source = Side("source", "model.onnx");
  report.target = Side("target", "model_fp16.onnx");
  report.inputs.origin = "generated (seed 1, 2 samples): image uniform [0, 1)";
  report.inputs.samples = 2;
  const std::vector<float> logits = {0.25f, -1.5f, 3.0f, 0.125f};
  const std::vector<float> boxes = {10.0f, 20.0f, 30.0f, 40.0f};
  report.checks.push_back(Check(0, "logits", logits, {0.25f, -1.5f, 3.0f, 0.12501f}));
  report.checks.push_back(Check(0, "boxes", boxes, boxes));
  report.checks.push_back(Check(1, "logits", logits, logits));
  report.checks.push_back(Check(1, "boxes", boxes, {10.0f, 20.05f, std::nanf(""), 40.0f}));
  report.verdict = gate::Verdict::kFail;
  return report;
}

gate::VerifyReport Verification() {
  gate::VerifyReport report;
  report.source = "model.onnx";
  report.target = "model_fp16.onnx";
  report.conversion_path = "fp16";
  report.conversion_detail = "fp16: convgate fp16 1";
  convert::ConversionRecord conversion;
  conversion.kind = "fp16";
  conversion.tool = "convgate fp16";
  conversion.tool_version = "1";
  conversion.converter = "convgate fp16";
  conversion.params = {{"keep_io_types", "true"}};
  conversion.source_path = "model.onnx";
  conversion.source_sha256 = std::string(64, 'a');
  conversion.output_path = "model_fp16.onnx";
  conversion.output_sha256 = std::string(64, 'b');
  conversion.output_bytes = 4096;
  conversion.cache_key = std::string(64, 'c');
  conversion.seconds = 0.25;
  conversion.attempts = 1;
  conversion.notes = {"3 values outside the float16 range were clamped"};
  report.conversion = conversion;
  report.conversion_passed = true;
  gate::RunReport e2e;
  e2e.model = Side("model", "model_fp16.onnx");
  e2e.inputs.origin = "generated (seed 1, 2 samples): image uniform [0, 1)";
  e2e.inputs.samples = 2;
  e2e.verdict = gate::Verdict::kPass;
  report.e2e = e2e;
  report.comparison = Comparison();
  report.task = graph::DetectedTask{"image-classification", "one image input and a Conv"};
  report.verdict = gate::Verdict::kFail;
  return report;
}

gate::NodeSampleResult NodeSample(int sample, bool passed, double max_abs_error) {
  gate::NodeSampleResult result;
  result.sample = sample;
  result.passed = passed;
  result.source_desc = "float32[1, 4]";
  result.target_desc = "float32[1, 4]";
  result.elements = 4;
  result.mismatches = passed ? 0 : 1;
  result.max_abs_error = max_abs_error;
  result.mean_abs_error = max_abs_error / 4;
  result.max_rel_error = max_abs_error / 20;
  result.p99_abs_error = max_abs_error;
  result.cosine = 0.9990234375;
  result.atol = 1e-5;
  result.rtol = 1e-3;
  result.source_min = 10.0;
  result.source_max = 40.0;
  result.target_min = 10.0;
  result.target_max = 40.0;
  if (!passed) result.failures = {"1 of 4 elements outside atol 1e-05 + rtol 0.001 * |source|"};
  return result;
}

// The comparison of Comparison(), run per node: a Relu that passes, then the Conv that breaks
// boxes (its own error fails the tolerance: the culprit), reduced to a one-node folder whose
// reproducer fails on its own.
gate::ReduceReport Reduction() {
  gate::PerNodeReport per_node;
  per_node.local_error_mode = "failed";
  per_node.memory_budget_bytes = 1 << 30;
  per_node.chunks = 1;
  per_node.runs = 5;
  per_node.largest_chunk_bytes = 64;
  gate::NodeCheck relu;
  relu.node_index = 0;
  relu.node = "relu0";
  relu.op_type = "Relu";
  relu.inputs = {"image"};
  relu.tensor = "relu0_out";
  relu.samples = {NodeSample(0, true, 0.0), NodeSample(1, true, 0.0)};
  gate::NodeCheck conv;
  conv.node_index = 1;
  conv.node = "conv1";
  conv.op_type = "Conv";
  conv.inputs = {"relu0_out", "w", ""};
  conv.tensor = "boxes";
  conv.status = gate::NodeStatus::kFailed;
  conv.samples = {NodeSample(0, true, 0.0), NodeSample(1, false, 0.05)};
  conv.first_failing_sample = 1;
  conv.max_abs_error = 0.05;
  gate::LocalError local;
  local.computed = true;
  local.sample = 1;
  local.result = NodeSample(1, false, 0.05);
  local.inputs_from_source = {"relu0_out"};
  conv.local = local;
  per_node.nodes = {relu, conv};
  per_node.unmatched_target = {"w_cast"};
  per_node.summary = {1, 1, 0, 1};
  per_node.first_divergent = 1;
  per_node.culprit = 1;
  per_node.by_added_error = {1};
  per_node.notes = {"1 target tensor has no source counterpart"};
  gate::ReduceReport report;
  report.comparison = Comparison();
  report.comparison.per_node = per_node;
  report.node = 1;
  report.reason = "culprit: its own error fails the tolerance";
  report.sample = 1;
  report.out_dir = "bug";
  report.files = {"node.onnx", "inputs.npz", "expected.npz", "repro.sh", "README.md"};
  report.command = "convgate compare node.onnx node.onnx --load-inputs inputs.npz";
  gate::CompareReport reproduction = Comparison();
  reproduction.checks.erase(reproduction.checks.begin(), reproduction.checks.begin() + 3);
  report.reproduction = reproduction;
  report.reproduces = true;
  report.notes = {"the reproducer runs on ort"};
  report.verdict = gate::Verdict::kPass;
  return report;
}

}  // namespace convgate::report::sample_reports
