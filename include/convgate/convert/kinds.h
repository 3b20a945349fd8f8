// The conversion kinds convgate knows and each kind's parameters with their defaults: one table
// from which `convgate convert --help`, docs/guide.md's table and the parameter checks all come.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "convgate/convert/convert.h"
#include "convgate/core/status.h"

namespace convgate::convert {

struct ConversionParam {
  std::string name;          // "keep_io_types"
  std::string default_text;  // "0", "17", "(none)"
  std::string meaning;       // one line
};

struct ConversionKind {
  std::string name;      // "opset", "fp16", "ort-optimized", "onnx", "external"
  std::string spelling;  // how --to writes it: "opset:N", "ort-optimized:basic|extended|all"
  std::string summary;
  std::vector<ConversionParam> params;
};

const std::vector<ConversionKind>& ConversionKinds();

// The kind a --to value names ("opset:17" -> the "opset" entry), or nullptr.
const ConversionKind* FindConversionKind(std::string_view to);

// What can be checked before anything runs: the kind is known (InvalidArgument listing the kinds),
// every parameter is one the kind takes (naming the known ones), --converter goes with kind
// "external" only.
Status CheckConversionRequest(const ConversionRequest& request);

}  // namespace convgate::convert
