// Writes the seed corpora of the fuzz targets, fuzz/corpus/<target>/, with convgate's own writers
// and ONNX text, so every committed seed can be made again:
//
//   cmake --build build --target convgate-fuzz-seeds && build/fuzz/convgate-fuzz-seeds fuzz/corpus
//
// Seeds are small valid files of each format plus a few near-valid ones (cut short, one field
// wrong), which get the fuzzer past the first checks. Files numpy and Python's zipfile write come
// from make_numpy_seeds.py. Output is deterministic: rerunning changes no file.
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "convgate/compare/agreement.h"
#include "convgate/compare/policy.h"
#include "convgate/compare/tensor_compare.h"
#include "convgate/core/tensor.h"
#include "convgate/gate/results.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/tensor_proto.h"
#include "convgate/report/report.h"

namespace convgate::fuzz {
namespace {

namespace fs = std::filesystem;

class Seeds {
 public:
  explicit Seeds(fs::path root) : root_(std::move(root)) {}

  void Write(const std::string& target, const std::string& name, const std::string& bytes) {
    const fs::path dir = root_ / target;
    fs::create_directories(dir);
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out << bytes;
    if (!out) Fail(dir / name, "cannot write");
  }

  fs::path Path(const std::string& target, const std::string& name) {
    fs::create_directories(root_ / target);
    return root_ / target / name;
  }

  [[noreturn]] static void Fail(const fs::path& path, const std::string& why) {
    std::fprintf(stderr, "convgate-fuzz-seeds: %s: %s\n", path.c_str(), why.c_str());
    std::exit(1);
  }

 private:
  fs::path root_;
};

template <typename T>
T Check(Result<T> result, const std::string& what) {
  if (!result.ok()) Seeds::Fail(what, result.status().ToString());
  return std::move(result).value();
}

void CheckOk(const Status& status, const std::string& what) {
  if (!status.ok()) Seeds::Fail(what, status.ToString());
}

// A tensor of `dtype` counting up from `first`: small values every dtype holds.
Tensor Ramp(DType dtype, Shape shape, double first = 0.0) {
  Tensor tensor = Check(Tensor::Allocate(dtype, std::move(shape)), "tensor");
  for (int64_t idx = 0; idx < tensor.num_elements(); ++idx) tensor.SetDouble(idx, first + idx);
  return tensor;
}

Tensor Strings(std::vector<std::string> values) {
  const int64_t count = static_cast<int64_t>(values.size());
  return Check(Tensor::FromStrings(Shape::Of({count}), std::move(values)), "strings");
}

// One tensor of every dtype, and the shapes that take special paths: a scalar, an empty tensor.
std::vector<std::pair<std::string, Tensor>> SampleTensors() {
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (DType dtype : kAllDTypes) {
    tensors.emplace_back(std::string(DTypeName(dtype)), Ramp(dtype, Shape::Of({2, 3}), -2.0));
  }
  tensors.emplace_back("scalar", Ramp(DType::kFloat64, Shape::Of({}), 1.5));
  tensors.emplace_back("empty", Ramp(DType::kFloat32, Shape::Of({0, 3})));
  Tensor special = Ramp(DType::kFloat32, Shape::Of({4}));
  special.SetDouble(0, std::numeric_limits<double>::quiet_NaN());
  special.SetDouble(1, -std::numeric_limits<double>::infinity());
  special.SetDouble(2, -0.0);
  tensors.emplace_back("special", std::move(special));
  tensors.emplace_back("strings", Strings({"cat", "", "日本", "a\tb"}));
  return tensors;
}

void NpySeeds(Seeds& seeds) {
  for (const auto& [name, tensor] : SampleTensors()) {
    seeds.Write("npy", name + ".npy", Check(io::SerializeNpy(tensor), name));
  }
  const std::string valid = Check(io::SerializeNpy(Ramp(DType::kInt32, Shape::Of({3}))), "i4");
  seeds.Write("npy", "near_truncated.npy", valid.substr(0, valid.size() - 2));
  std::string fortran = valid;
  fortran.replace(fortran.find("False"), 5, "True ");
  seeds.Write("npy", "near_fortran.npy", fortran);
}

void NpzSeeds(Seeds& seeds) {
  TensorMap mixed;
  for (auto& [name, tensor] : SampleTensors()) {
    if (name == "float32" || name == "int64" || name == "strings" || name == "scalar") {
      CheckOk(mixed.Insert(name, std::move(tensor)), name);
    }
  }
  TensorMap one;
  CheckOk(one.Insert("x", Ramp(DType::kFloat32, Shape::Of({2, 2}))), "x");
  TensorMap odd_names;
  CheckOk(odd_names.Insert("input:0", Ramp(DType::kUInt8, Shape::Of({3}))), "input:0");
  CheckOk(odd_names.Insert("dir/y", Ramp(DType::kBool, Shape::Of({2}))), "dir/y");
  for (const std::string target : {"npz", "npz_directory"}) {
    const auto write = [&](const std::string& name, const TensorMap& tensors, bool compress) {
      const fs::path path = seeds.Path(target, name);
      CheckOk(io::WriteNpz(path, tensors, {.compress = compress}), path);
    };
    write("mixed.npz", mixed, false);
    write("mixed_compressed.npz", mixed, true);
    write("one.npz", one, false);
    write("odd_names.npz", odd_names, true);
    write("empty.npz", TensorMap(), false);
  }
}

void TensorProtoSeeds(Seeds& seeds) {
  for (const auto& [name, tensor] : SampleTensors()) {
    seeds.Write("tensor_proto", name + ".pb", io::SerializeTensorProto(tensor, name));
  }
  // Typed fields instead of raw_data, as older exporters and the ONNX test data write them.
  onnx::TensorProto floats;
  floats.set_name("typed_float");
  floats.set_data_type(onnx::TensorProto::FLOAT);
  floats.add_dims(3);
  for (float value : {1.0f, -2.5f, 3.25f}) floats.add_float_data(value);
  seeds.Write("tensor_proto", "typed_float.pb", floats.SerializeAsString());
  onnx::TensorProto halves;
  halves.set_name("typed_float16");
  halves.set_data_type(onnx::TensorProto::FLOAT16);
  halves.add_dims(2);
  halves.add_int32_data(0x3c00);  // 1.0
  halves.add_int32_data(0xc000);  // -2.0
  seeds.Write("tensor_proto", "typed_float16.pb", halves.SerializeAsString());
  onnx::TensorProto external;
  external.set_name("external");
  external.set_data_type(onnx::TensorProto::FLOAT);
  external.add_dims(4);
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = external.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  seeds.Write("tensor_proto", "near_external.pb", external.SerializeAsString());
}

// Models in ONNX text: subgraphs, every Constant attribute, non-tensor types, symbolic dims.
constexpr const char* kOnnxModels[][2] = {
    {"if.onnx", R"(
<ir_version: 8, opset_import: ["" : 15, "com.example" : 1], producer_name: "convgate-seeds">
main_graph (float[N, 2] x, bool c, int64[3] s) => (float[N, 2] y, float[?, unk] y2)
  <float[2] w = {1.0, 2.0}, int64[3] s = {1, 2, 3}>
{
  t = Add(x, w)
  y = If(c) <then_branch = g1 () => (float[N, 2] a) { a = Identity(t) },
             else_branch = g2 () => (float[N, 2] b) { b = Neg(t) }>
  y2 = com.example.Custom(t)
}
)"},
    {"constants.onnx", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] x, bool c) => (float[2] y, int64[3] z)
  <float[2] w = {1.0, 2.0}>
{
  t = Constant <value = float[2, 3] {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}> ()
  f = Constant <value_float = 0.5> ()
  fs = Constant <value_floats = [1.0, 2.0, 3.0]> ()
  i = Constant <value_int = 7> ()
  is = Constant <value_ints = [1, 2, 3]> ()
  s = Constant <value_string = "text"> ()
  ss = Constant <value_strings = ["a", "bc"]> ()
  y = Add (x, w)
  z = If (c) <then_branch = g1 () => (int64[3] a) { a = Constant <value_ints = [4, 5, 6]> () },
              else_branch = g2 () => (int64[3] b) { b = Identity (is) }>
}
)"},
    {"loop.onnx", R"(
<ir_version: 8, opset_import: ["" : 16]>
g (int64 n, bool cond, float[1] init) => (float[1] final, float[?, 1] scan)
{
  final, scan = Loop (n, cond, init) <body = body (int64 i, bool c_in, float[1] v) =>
      (bool c_out, float[1] v_out, float[1] v_scan) {
    one = Constant <value = float[1] {1.0}> ()
    v_out = Add (v, one)
    v_scan = Identity (v_out)
    c_out = Identity (c_in)
  }>
}
)"},
    {"mlp.onnx", R"(
<ir_version: 9, opset_import: ["" : 17], producer_name: "pytorch", producer_version: "2.1">
mlp (float[batch, 4] image) => (float[batch, 3] logits, float[batch, 3] probs)
  <float[4, 3] w = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2},
   float[3] b = {0.0, 0.5, -0.5}>
{
  mm = MatMul (image, w)
  logits = Add (mm, b)
  relu = Relu (logits)
  probs = Softmax <axis = -1> (relu)
}
)"},
    {"types.onnx", R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] xs, int64[?] ids, string[2] words, float16[1, 2] h, bfloat16[2] b, uint8[2] u)
    => (float[2] first, float[2] maybe, double[2] d)
{
  zero = Constant <value_int = 0> ()
  first = SequenceAt (xs, zero)
  maybe = Optional (first)
  d = Cast <to = 11> (first)
}
)"},
};

onnx::ModelProto ParseModel(const char* name, const char* text) {
  onnx::ModelProto model;
  const onnx::Common::Status status = onnx::OnnxParser::Parse(model, text);
  if (!status.IsOK()) Seeds::Fail(name, status.ErrorMessage());
  return model;
}

// Sets a value's type to seq(<its type>) or optional(<its type>), which onnx 1.12's text parser
// cannot spell.
void WrapType(onnx::ValueInfoProto* value, bool sequence) {
  const onnx::TypeProto element = value->type();
  onnx::TypeProto* type = value->mutable_type();
  type->Clear();
  if (sequence) {
    *type->mutable_sequence_type()->mutable_elem_type() = element;
  } else {
    *type->mutable_optional_type()->mutable_elem_type() = element;
  }
}

void OnnxModelSeeds(Seeds& seeds) {
  for (const auto& [name, text] : kOnnxModels) {
    onnx::ModelProto model = ParseModel(name, text);
    if (std::string(name) == "types.onnx") {
      WrapType(model.mutable_graph()->mutable_input(0), /*sequence=*/true);
      WrapType(model.mutable_graph()->mutable_output(1), /*sequence=*/false);
    }
    seeds.Write("onnx_model", name, model.SerializeAsString());
  }
  // Weights in a side file, and a sparse Constant: storage the text syntax cannot spell.
  onnx::ModelProto model = ParseModel("mlp.onnx", kOnnxModels[3][1]);
  onnx::TensorProto* weights = model.mutable_graph()->mutable_initializer(0);
  weights->clear_float_data();
  weights->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] :
       {std::pair{"location", "weights.bin"}, {"offset", "0"}, {"length", "48"}}) {
    onnx::StringStringEntryProto* entry = weights->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  onnx::NodeProto* sparse = model.mutable_graph()->add_node();
  sparse->set_op_type("Constant");
  sparse->add_output("sparse");
  onnx::AttributeProto* attribute = sparse->add_attribute();
  attribute->set_name("sparse_value");
  attribute->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  onnx::SparseTensorProto* tensor = attribute->mutable_sparse_tensor();
  tensor->add_dims(10);
  tensor->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  tensor->mutable_values()->add_dims(2);
  tensor->mutable_values()->add_float_data(1.0f);
  tensor->mutable_values()->add_float_data(2.0f);
  tensor->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  tensor->mutable_indices()->add_dims(2);
  tensor->mutable_indices()->add_int64_data(3);
  tensor->mutable_indices()->add_int64_data(7);
  const std::string bytes = model.SerializeAsString();
  seeds.Write("onnx_model", "external_sparse.onnx", bytes);
  seeds.Write("onnx_model", "near_truncated.onnx", bytes.substr(0, bytes.size() - 7));
}

Tensor Values(DType dtype, const std::vector<double>& values) {
  Tensor tensor =
      Check(Tensor::Allocate(dtype, Shape::Of({static_cast<int64_t>(values.size())})), "values");
  for (size_t idx = 0; idx < values.size(); ++idx) {
    tensor.SetDouble(static_cast<int64_t>(idx), values[idx]);
  }
  return tensor;
}

gate::OutputCheck Judged(const std::string& output, const Tensor& source, const Tensor& target,
                         const compare::Policy& policy) {
  gate::OutputCheck check;
  check.output = output;
  check.policy = policy.For(output, source.dtype(), target.dtype());
  check.tolerance = check.policy.tolerance();
  check.comparison = compare::CompareTensors(source, target, check.tolerance);
  check.passed = check.comparison->passed;
  check.failures = check.comparison->failures;
  return check;
}

// A compare report with finite, NaN and Inf errors, float16, integers, strings, a missing output,
// a policy with every knob set somewhere, and classifier agreement: every reader of check.
gate::CompareReport SampleReport() {
  gate::CompareReport report;
  report.source.role = "source";
  report.source.path = "a.onnx";
  report.source.kind = "model";
  report.source.format = "onnx";
  report.source.backend = "ort";
  report.source.output_names = {"y", "h", "ids", "words", "logits"};
  report.target = report.source;
  report.target.role = "target";
  report.target.path = "b.onnx";
  report.inputs.origin = "generated: uniform [0, 1), seed 1";
  report.inputs.samples = 1;
  report.inputs.tensors = {{"x", "float32", {1, 7}}};
  CheckOk(compare::AddMismatchPpm("y:10", report.policy), "mismatch_ppm");
  CheckOk(compare::AddCheckErrorStat("h:p95", report.policy), "check_error_stat");
  CheckOk(compare::AddMinSnrDb("20", report.policy), "min_snr_db");
  CheckOk(compare::AddMinCosine("0.99", report.policy), "min_cosine");
  report.policy.dtype_defaults[DType::kFloat16] = {1e-3, std::nullopt};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  report.checks.push_back(Judged("y", Values(DType::kFloat32, {1, 2, nan, -3, 0, inf, 1e-3}),
                                 Values(DType::kFloat32, {1.01, 2, 5, -3.1, 1e-7, inf, 2e-3}),
                                 report.policy));
  report.checks.push_back(Judged("h", Values(DType::kFloat16, {0.5, 0.25, 8, 100}),
                                 Values(DType::kFloat16, {0.5, 0.2501, 8.01, 99}), report.policy));
  report.checks.push_back(Judged("ids", Values(DType::kInt64, {1, 2, 3}),
                                 Values(DType::kInt64, {1, 2, 4}), report.policy));
  report.checks.push_back(Judged("words", Strings({"a", "b"}), Strings({"a", "c"}), report.policy));
  gate::OutputCheck missing;
  missing.output = "extra";
  missing.failures = {"output 'extra' is missing on the target"};
  report.checks.push_back(std::move(missing));
  compare::AgreementAccumulator agreement(compare::PredictionKind::kScores, {.top_k = {2}});
  Tensor source_scores = Values(DType::kFloat32, {0.1, 0.7, 0.2, 0.6, 0.3, 0.1});
  Tensor target_scores = Values(DType::kFloat32, {0.2, 0.6, 0.2, 0.3, 0.6, 0.1});
  source_scores =
      Check(Tensor::FromBytes(DType::kFloat32, Shape::Of({2, 3}), source_scores.bytes()), "scores");
  target_scores =
      Check(Tensor::FromBytes(DType::kFloat32, Shape::Of({2, 3}), target_scores.bytes()), "scores");
  CheckOk(agreement.Add(source_scores, target_scores), "agreement");
  gate::AgreementRecord logits;
  logits.output = "logits";
  logits.selected_by = "named";
  logits.stats = agreement.Stats();
  logits.checks = {{"logits:top1>=0.9", false, "top-1 agreement 0.5"}};
  report.agreements.push_back(std::move(logits));
  report.structure_failures = {"output count differs: 5 against 4"};
  report.verdict = gate::Verdict::kFail;
  return report;
}

// report.json as compare writes it, without the facts of the machine that made the seeds.
std::string ReportText(const gate::CompareReport& report, const report::Invocation& invocation) {
  nlohmann::json json = report::ReportJson(report, invocation);
  json["host"] = {{"arch", "x86_64"}, {"cpu", "cpu"},       {"hostname", "host"},
                  {"kernel", "6.1"},  {"logical_cores", 2}, {"memory_bytes", 1 << 30},
                  {"os", "Linux"}};
  json["tool"]["commit"] = "0000000";
  json["seconds"] = 1.5;
  return json.dump();
}

void ReportJsonSeeds(Seeds& seeds) {
  report::Invocation invocation;
  invocation.command = "compare";
  invocation.argv = {"compare", "a.onnx", "b.onnx"};
  invocation.started_at = "2025-01-01T00:00:00Z";
  gate::CompareReport report = SampleReport();
  seeds.Write("report_json", "compare.json", ReportText(report, invocation));
  report.checks.resize(1);
  report.agreements.clear();
  report.structure_failures.clear();
  seeds.Write("report_json", "one_check.json", ReportText(report, invocation));
  report.error = gate::GateError{gate::Stage::kLoad, Status::DataLoss("b.onnx: truncated")};
  report.verdict = gate::Verdict::kError;
  seeds.Write("report_json", "near_error.json", ReportText(report, invocation));
}

constexpr const char* kPolicies[][2] = {
    {"every_knob.yaml", R"(atol: 1e-5
rtol: 1e-3
check_error_stat: elementwise
mismatch_ppm: 0
min_cosine: 0.999
min_snr_db: 40
dtype_defaults: {float16: {atol: 1e-3, rtol: 1e-2}, bfloat16: {rtol: 0.05}}
outputs:
  logits: {atol: 1e-4, check_error_stat: p99}
  "input:0": {mismatch_ppm: 100, min_cosine: 0.9}
)"},
    {"block.yaml", R"(# per-output settings only
outputs:
  probs:
    rtol: 0.01
    check_error_stat: p99.5
  boxes:
    check_error_stat: max
    min_snr_db: 30
dtype_defaults:
  float64:
    atol: 0
)"},
    {"anchors.yaml", R"(outputs:
  a: &tight {atol: 1e-6, rtol: 1e-6}
  b: *tight
)"},
    {"empty.yaml", ""},
    {"near_type.yaml", "atol: [1, 2]\n"},
    {"near_unknown.yaml", "outputs: {y: {atoll: 1}}\n"},
    {"near_range.yaml", "min_cosine: 2\nmismatch_ppm: -1\n"},
};

void PolicySeeds(Seeds& seeds) {
  for (const auto& [name, text] : kPolicies) seeds.Write("policy_yaml", name, text);
}

}  // namespace
}  // namespace convgate::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (fuzz/corpus)\n", argv[0]);
    return 2;
  }
  convgate::fuzz::Seeds seeds(argv[1]);
  convgate::fuzz::NpySeeds(seeds);
  convgate::fuzz::NpzSeeds(seeds);
  convgate::fuzz::TensorProtoSeeds(seeds);
  convgate::fuzz::OnnxModelSeeds(seeds);
  convgate::fuzz::ReportJsonSeeds(seeds);
  convgate::fuzz::PolicySeeds(seeds);
  return 0;
}
