// Which outputs are classifier outputs, and the `--agreement` checks that gate on them.
//
// Only an --agreement check changes the verdict. An output named by --classifier or by a check is
// "named"; one recognised by its name, dtype and shape is "detected" and only reported, so a
// heuristic can never fail a gate nobody asked it to.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/compare/agreement.h"
#include "convgate/core/dtype.h"
#include "convgate/core/shape.h"
#include "convgate/core/status.h"

namespace convgate::compare {

enum class AgreementMetric {
  kTopK,      // fraction of rows whose source top-1 is within the target's top k ("top1", "top5")
  kFlipRate,  // flips / rows with a source margin above --flip-margin ("flip_rate")
  kFlips,     // the flip count itself ("flips")
  kDiagonal,  // the confusion matrix is diagonal ("diagonal"; takes no comparison)
};

enum class Comparison { kGreaterEqual, kGreater, kLessEqual, kLess, kEqual };
std::string_view ComparisonText(Comparison op);  // ">=", ">", "<=", "<", "=="

struct AgreementCheck {
  std::string text;  // as given, for reports
  std::string output;
  AgreementMetric metric = AgreementMetric::kTopK;
  int k = 1;                                  // kTopK only
  Comparison op = Comparison::kGreaterEqual;  // unused for kDiagonal
  double value = 0.0;
};

// Parses one --agreement argument, "NAME:METRIC OP VALUE" or "NAME:diagonal": "logits:top1>=0.999",
// "logits:top5>=1", "label:flip_rate<=0", "probs:flips==0", "label:diagonal". The name ends at the
// last ':' (tensor names contain ':', as tf2onnx's "logits:0"); spaces around the comparison are
// allowed. Comparisons: >=, >, <=, <, ==. METRIC is top<K> (K >= 1), flip_rate, flips or
// diagonal. InvalidArgument quoting the text when the name is empty, the metric unknown, K not a
// positive integer, the comparison or value missing or malformed, a rate outside [0, 1], a
// negative flip count, or diagonal given a comparison.
Result<AgreementCheck> ParseAgreementCheck(std::string_view text);

// Everything `compare` needs to measure agreement.
struct AgreementConfig {
  std::vector<std::string> classifiers;  // --classifier: outputs that are class scores or labels
  std::vector<AgreementCheck> checks;    // --agreement
  // The comparison counts top-k agreement for these k and every k a check names.
  AgreementOptions options;

  // Every output named by --classifier or a check, each once, in the order given.
  std::vector<std::string> NamedOutputs() const;
};

struct AgreementVerdict {
  bool passed = false;
  // One sentence, the same for pass and fail, e.g. "output 'logits': top-1 agreement 0.9940 (994 of
  // 1000 rows) < required 0.999; 6 rows changed prediction, most common: class 3 -> 5 (4 rows)".
  std::string message;
};

// REQUIRES: check.output's stats were counted with check's k among options.top_k (otherwise the
// check fails, saying so).
AgreementVerdict EvaluateAgreementCheck(const AgreementCheck& check, const AgreementStats& stats);

// How an output is read, or nullopt when it is not a classifier output.
// named (--classifier or a check): integer and bool tensors are labels, floating ones scores;
// strings are neither.
// Otherwise detected by name (case-insensitive) and type: an integer tensor whose name contains
// "label", "class", "pred" or "argmax" holds labels; a floating tensor of rank 1 or 2 with a last
// dim >= 2 whose name contains "logit", "prob", "score", "softmax" or "class" holds scores.
std::optional<PredictionKind> PredictionKindFor(std::string_view name, DType dtype,
                                                const Shape& shape, bool named);

}  // namespace convgate::compare
