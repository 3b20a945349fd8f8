// The list of passes, --pass parsing and signatures.
#include <algorithm>

#include "convgate/core/file_util.h"
#include "convgate/core/join.h"
#include "transform/pass.h"

namespace convgate::transform {
namespace {

// "name" or "name:k=v:k2=v2".
Result<PassSpec> ParseOne(const std::string& text) {
  PassSpec spec;
  size_t colon = text.find(':');
  spec.name = text.substr(0, colon);
  const PassInfo* info = FindPass(spec.name);
  if (info == nullptr) {
    return Status::InvalidArgument("--pass '" + text + "': unknown pass '" + spec.name +
                                   "' (passes: " + JoinComma(PassNames(), "none") + ")");
  }
  while (colon != std::string::npos) {
    const size_t next = text.find(':', colon + 1);
    const std::string param = text.substr(colon + 1, next - colon - 1);
    const size_t equals = param.find('=');
    if (equals == std::string::npos || equals == 0) {
      return Status::InvalidArgument("--pass '" + text + "': parameter '" + param +
                                     "' is not KEY=VALUE");
    }
    const std::string key = param.substr(0, equals);
    const std::vector<std::string>& allowed = info->param_names;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Status::InvalidArgument("--pass '" + text + "': " + spec.name + " has no parameter '" +
                                     key + "' (parameters: " + JoinComma(allowed, "none") + ")");
    }
    if (!spec.params.emplace(key, param.substr(equals + 1)).second) {
      return Status::InvalidArgument("--pass '" + text + "': parameter '" + key +
                                     "' is given twice");
    }
    colon = next;
  }
  // Parameter values are checked by the pass's factory, before any model loads.
  CONVGATE_RETURN_IF_ERROR(info->make(spec.params).status());
  return spec;
}

}  // namespace

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> kPasses = {
      {"fold_batchnorm", false, false, "folded", {}, MakeFoldBatchNorm},
      {"fuse_matmul_add", false, false, "fused", {}, MakeFuseMatMulAdd},
      {"div_to_mul", false, false, "rewritten", {}, MakeDivToMul},
      {"constant_folding", true, false, "folded", {"max_elements"}, MakeConstantFolding},
      {"eliminate_identity", true, false, "removed", {}, MakeEliminateIdentity},
      {"merge_parallel_matmuls", false, false, "merged", {}, MakeMergeParallelMatMuls},
      {"fold_batchnorm_wrong_for_tests", false, true, "folded", {}, MakeFoldBatchNormWrongForTests},
  };
  return kPasses;
}

const PassInfo* FindPass(const std::string& name) {
  for (const PassInfo& info : AllPasses()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::vector<std::string> PassNames() {
  std::vector<std::string> names;
  for (const PassInfo& info : AllPasses()) {
    if (!info.hidden) names.push_back(info.name);
  }
  return names;
}

Result<std::vector<PassSpec>> ParsePassSpecs(const std::vector<std::string>& texts) {
  std::vector<PassSpec> specs;
  for (const std::string& text : texts) {
    // "a,b" lists passes; a pass's parameters follow its name after ':'.
    size_t start = 0;
    while (start <= text.size()) {
      const size_t comma = text.find(',', start);
      const std::string one = text.substr(start, comma - start);
      if (one.empty()) return Status::InvalidArgument("--pass '" + text + "': empty pass name");
      CONVGATE_ASSIGN_OR_RETURN(specs.emplace_back(), ParseOne(one));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (specs.empty()) return Status::InvalidArgument("give at least one --pass");
  return specs;
}

std::string PassSignature(const PassSpec& spec) {
  std::string text = spec.name;
  for (const auto& [key, value] : spec.params) text += "|" + key + "=" + value;  // map: sorted
  return Sha256Hex(text).substr(0, 16);
}

}  // namespace convgate::transform
