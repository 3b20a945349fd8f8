#include "convgate/loaders/data_spec.h"

#include <array>
#include <utility>

#include "convgate/core/numbers.h"

namespace convgate::loaders {
namespace {

constexpr std::array<std::pair<DataKind, std::string_view>, 5> kKinds{{
    {DataKind::kImage, "image"},
    {DataKind::kAudio, "audio"},
    {DataKind::kTokens, "tokens"},
    {DataKind::kText, "text"},
    {DataKind::kTable, "table"},
}};

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

// "0.485,0.456,0.406" or "0.5": one value or one per channel.
Result<std::vector<double>> ParseValues(std::string_view text, std::string_view what,
                                        bool positive) {
  std::vector<double> values;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    Result<double> value = ParseNumber(part, -1e9, 1e9);
    if (!value.ok()) {
      return Status::InvalidArgument("the " + std::string(what) + " " + Quoted(part) +
                                     " is not a number");
    }
    if (positive && *value <= 0) {
      return Status::InvalidArgument("the " + std::string(what) + " " + Quoted(part) +
                                     " must be above 0");
    }
    values.push_back(*value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (values.size() != 1 && values.size() != 3 && values.size() != 4) {
    return Status::InvalidArgument("the " + std::string(what) + " " + Quoted(text) + " has " +
                                   std::to_string(values.size()) +
                                   " values: give one, or one per channel (3 or 4)");
  }
  return values;
}

}  // namespace

std::string_view DataKindName(DataKind kind) {
  for (const auto& [known, name] : kKinds) {
    if (known == kind) return name;
  }
  return "unknown";
}

Result<DataSpec> ParseDataSpec(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  DataSpec spec;
  bool known = false;
  for (const auto& [value, name] : kKinds) {
    if (name == kind) {
      spec.kind = value;
      known = true;
    }
  }
  if (colon == std::string_view::npos || !known) {
    return Status::InvalidArgument(Quoted(text) +
                                   " is not KIND:PATH or KIND:INPUT=PATH with KIND one of image, "
                                   "audio, tokens, text, table");
  }
  std::string_view rest = text.substr(colon + 1);
  // INPUT=PATH: an input name holds no '/', a path may hold '='; "x=photos/" names input x.
  const size_t equals = rest.find('=');
  if (equals != std::string_view::npos &&
      rest.substr(0, equals).find('/') == std::string_view::npos) {
    spec.input = std::string(rest.substr(0, equals));
    rest = rest.substr(equals + 1);
    if (spec.input.empty()) {
      return Status::InvalidArgument(Quoted(text) + " names no input before '='");
    }
  }
  if (rest.empty()) return Status::InvalidArgument(Quoted(text) + " names no file or folder");
  spec.path = std::string(rest);
  return spec;
}

Status ParseResize(std::string_view text, ImageOptions& options) {
  const size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos) {
    return Status::InvalidArgument(Quoted(text) + " is not WIDTHxHEIGHT, e.g. 320x320");
  }
  Result<int64_t> width = ParseInteger(text.substr(0, x), 1, 65536);
  Result<int64_t> height = ParseInteger(text.substr(x + 1), 1, 65536);
  if (!width.ok() || !height.ok()) {
    return Status::InvalidArgument(Quoted(text) +
                                   " is not WIDTHxHEIGHT with both from 1 to 65536, e.g. 320x320");
  }
  options.width = static_cast<int>(*width);
  options.height = static_cast<int>(*height);
  return Status::OK();
}

Status ParseFit(std::string_view text, ImageOptions& options) {
  if (text == "stretch") {
    options.fit = ImageFit::kStretch;
  } else if (text == "letterbox") {
    options.fit = ImageFit::kLetterbox;
  } else if (text == "crop") {
    options.fit = ImageFit::kCrop;
  } else {
    return Status::InvalidArgument(Quoted(text) + " is not stretch, letterbox or crop");
  }
  return Status::OK();
}

Status ParseColorOrder(std::string_view text, ImageOptions& options) {
  if (text == "rgb") {
    options.color = ColorOrder::kRgb;
  } else if (text == "bgr") {
    options.color = ColorOrder::kBgr;
  } else {
    return Status::InvalidArgument(Quoted(text) +
                                   " is not rgb or bgr (grey and alpha follow the input's "
                                   "channels)");
  }
  return Status::OK();
}

Status ParseLayout(std::string_view text, ImageOptions& options) {
  if (text == "nchw") {
    options.layout = ImageLayout::kNchw;
  } else if (text == "nhwc") {
    options.layout = ImageLayout::kNhwc;
  } else if (text == "auto") {
    options.layout = ImageLayout::kAuto;
  } else {
    return Status::InvalidArgument(Quoted(text) + " is not nchw, nhwc or auto");
  }
  return Status::OK();
}

Status ParseNormalize(std::string_view text, ImageOptions& options) {
  if (text == "imagenet") {
    options.mean = {0.485, 0.456, 0.406};
    options.std = {0.229, 0.224, 0.225};
    options.normalize_name = "imagenet";
    return Status::OK();
  }
  if (text == "none") {
    options.mean.clear();
    options.std.clear();
    options.normalize_name.clear();
    return Status::OK();
  }
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return Status::InvalidArgument(Quoted(text) +
                                   " is not imagenet, none or MEAN/STD (e.g. 0.5/0.5 or "
                                   "0.485,0.456,0.406/0.229,0.224,0.225)");
  }
  CONVGATE_ASSIGN_OR_RETURN(options.mean, ParseValues(text.substr(0, slash), "mean", false));
  CONVGATE_ASSIGN_OR_RETURN(options.std, ParseValues(text.substr(slash + 1), "std", true));
  options.normalize_name.clear();
  return Status::OK();
}

}  // namespace convgate::loaders
