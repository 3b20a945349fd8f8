// Builds the ONNX equivalent of a trained multinomial logistic regression from its coefficients,
// the conversion half of ONNX Runtime's train-convert-predict reference workflow
// (tests/fixtures/iris_logreg.py writes the coefficients; tests/cli/iris_cli_test.cc runs both).
//
//   convgate-make-logreg COEFFICIENTS.npz OUT.onnx [--perturb ROW,COL,DELTA]
//
// COEFFICIENTS.npz holds "coef" float32 [classes, features] (sklearn's coef_) and "intercept"
// float32 [classes]. The model is what skl2onnx produces for LinearClassifier, in plain ops:
//   X float32 [N, features] -> MatMul(coef^T) -> Add(intercept) -> Softmax(axis 1) ->
//   "probabilities"
//                                                              \-> ArgMax(axis 1) -> "label" int64
//                                                              [N]
// ArgMax reads the logits, as sklearn's predict() reads decision_function(), so ties resolve alike.
// --perturb adds DELTA to coef[ROW][COL]: a silently wrong conversion for the gate to catch.
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "convgate/io/npz.h"
#include "onnx_builder.h"

namespace {

using convgate::tools::AddFloatInitializer;
using convgate::tools::AddNode;
using convgate::tools::SetInt;
using convgate::tools::SetType;

struct Perturbation {
  bool active = false;
  int64_t row = 0, col = 0;
  float delta = 0.0f;
};

// coef [classes, features] row-major -> MatMul's B [features, classes].
std::vector<float> Transposed(const std::vector<float>& coef, int64_t classes, int64_t features) {
  std::vector<float> out(coef.size());
  for (int64_t cls = 0; cls < classes; ++cls) {
    for (int64_t feature = 0; feature < features; ++feature) {
      out[feature * classes + cls] = coef[cls * features + feature];
    }
  }
  return out;
}

onnx::ModelProto BuildModel(const std::vector<float>& coef, const std::vector<float>& intercept,
                            int64_t classes, int64_t features) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-logreg", "logreg");
  onnx::GraphProto* graph = model.mutable_graph();
  SetType(graph->add_input(), "X", onnx::TensorProto::FLOAT, {{0, "N"}, {features, nullptr}});
  AddFloatInitializer(graph, "coef_t", {features, classes}, Transposed(coef, classes, features));
  AddFloatInitializer(graph, "intercept", {classes}, intercept);
  AddNode(graph, "MatMul", {"X", "coef_t"}, {"scores"});
  AddNode(graph, "Add", {"scores", "intercept"}, {"logits"});
  SetInt(AddNode(graph, "Softmax", {"logits"}, {"probabilities"}), "axis", 1);
  onnx::NodeProto* argmax = AddNode(graph, "ArgMax", {"logits"}, {"label"});
  SetInt(argmax, "axis", 1);
  SetInt(argmax, "keepdims", 0);
  // sklearn-onnx's order: the label first, then the probabilities.
  SetType(graph->add_output(), "label", onnx::TensorProto::INT64, {{0, "N"}});
  SetType(graph->add_output(), "probabilities", onnx::TensorProto::FLOAT,
          {{0, "N"}, {classes, nullptr}});
  return model;
}

bool ParsePerturbation(const std::string& text, Perturbation& out) {
  long long row = 0, col = 0;
  float delta = 0.0f;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%lld,%lld,%f%c", &row, &col, &delta, &tail) != 3) return false;
  out = {true, row, col, delta};
  return row >= 0 && col >= 0;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "convgate-make-logreg: %s\n", message.c_str());
  return 1;
}

const convgate::Tensor* FindFloat(const convgate::TensorMap& tensors, const char* name,
                                  size_t rank) {
  const convgate::Tensor* tensor = tensors.Find(name);
  if (tensor == nullptr || tensor->dtype() != convgate::DType::kFloat32 ||
      tensor->shape().rank() != rank) {
    return nullptr;
  }
  return tensor;
}

}  // namespace

int main(int argc, char** argv) {
  Perturbation perturbation;
  if (argc == 5 && std::string(argv[3]) == "--perturb") {
    if (!ParsePerturbation(argv[4], perturbation)) {
      return Fail("--perturb wants ROW,COL,DELTA, got '" + std::string(argv[4]) + "'");
    }
  } else if (argc != 3) {
    return Fail("usage: convgate-make-logreg COEFFICIENTS.npz OUT.onnx [--perturb ROW,COL,DELTA]");
  }
  convgate::Result<convgate::TensorMap> tensors = convgate::io::ReadNpz(argv[1]);
  if (!tensors.ok()) return Fail(tensors.status().message());
  const convgate::Tensor* coef = FindFloat(*tensors, "coef", 2);
  const convgate::Tensor* intercept = FindFloat(*tensors, "intercept", 1);
  if (coef == nullptr || intercept == nullptr) {
    return Fail(std::string(argv[1]) + ": needs float32 'coef' [classes, features] and float32 " +
                "'intercept' [classes]");
  }
  const int64_t classes = coef->shape().dim(0), features = coef->shape().dim(1);
  if (intercept->shape().dim(0) != classes) return Fail("intercept and coef disagree on classes");
  std::vector<float> weights(coef->data<float>().begin(), coef->data<float>().end());
  if (perturbation.active) {
    if (perturbation.row >= classes || perturbation.col >= features) {
      return Fail("--perturb is outside coef " + coef->shape().ToString());
    }
    weights[perturbation.row * features + perturbation.col] += perturbation.delta;
  }
  const std::vector<float> bias(intercept->data<float>().begin(), intercept->data<float>().end());
  if (!convgate::tools::WriteModel(argv[2], BuildModel(weights, bias, classes, features))) {
    return Fail(std::string("cannot write ") + argv[2]);
  }
  return 0;
}
