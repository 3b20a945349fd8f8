// The fp16 conversion's parameters and its default op block list.
#include "convert/fp16.h"
#include "convert/params.h"

namespace convgate::convert {

const std::set<std::string>& DefaultFp16OpBlockList() {
  // onnxconverter-common's DEFAULT_OP_BLOCK_LIST, re-checked against ONNX 1.12's type constraints
  // and ONNX Runtime 1.29's CPU provider (tests/convert/fp16_ort_test.cc converts one model per
  // op and runs it). What stays, and why:
  //  - the ONNX spec allows no float16 where these take floats, so ONNX Runtime rejects the
  //    model: Resize and Upsample (`scales` is tensor(float)), Range (no float16 in T),
  //    NonMaxSuppression (`boxes`, `scores` are tensor(float));
  //  - ai.onnx.ml ops, whose type constraints have no float16 at all;
  //  - RandomUniformLike: kept from onnxconverter-common's list (its random output cannot be
  //    compared, so the test cannot show it is safe to drop).
  // Dropped, because ONNX Runtime 1.29 CPU runs them in float16 within 2e-2 of float32: TopK,
  // CumSum, Min, Max, RoiAlign (onnxconverter-common blocks them for older runtimes).
  static const std::set<std::string> kList = {
      // ONNX spec: float32-only inputs.
      "NonMaxSuppression", "Range", "Resize", "Upsample",
      // ai.onnx.ml: no float16 types.
      "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer",
      "FeatureVectorizer", "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor",
      "Normalizer", "OneHotEncoder", "SVMClassifier", "SVMRegressor", "Scaler",
      "TreeEnsembleClassifier", "TreeEnsembleRegressor", "ZipMap",
      // Unverified: random values.
      "RandomUniformLike"};
  return kList;
}

Result<Fp16Options> ParseFp16Params(const std::map<std::string, std::string>& params,
                                    int32_t half_type) {
  const std::string_view kKind = half_type == onnx::TensorProto::BFLOAT16 ? "bf16" : "fp16";
  Fp16Options options;
  options.half_type = half_type;
  CONVGATE_ASSIGN_OR_RETURN(options.keep_io_types,
                            BoolParam(params, "keep_io_types", options.keep_io_types, kKind));
  CONVGATE_ASSIGN_OR_RETURN(options.clamp, BoolParam(params, "clamp", options.clamp, kKind));
  // A user naming one more op to keep in float32 must not lose the default list: without it the
  // conversion fails on ops that have no float16 form (Resize's scales, NonMaxSuppression, ...).
  if (auto found = params.find("op_block_list"); found != params.end()) {
    for (const std::string& op : SplitList(found->second)) {
      if (op == "none") {
        options.op_block_list.clear();
      } else if (op.front() == '-') {
        options.op_block_list.erase(op.substr(1));
      } else {
        options.op_block_list.insert(op);
      }
    }
  }
  if (auto found = params.find("node_block_list"); found != params.end()) {
    const std::vector<std::string> nodes = SplitList(found->second);
    options.node_block_list = std::set<std::string>(nodes.begin(), nodes.end());
  }
  return options;
}

}  // namespace convgate::convert
