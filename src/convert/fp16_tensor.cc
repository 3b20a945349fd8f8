// float32 tensors to float16 or bfloat16, with a count of every value the format cannot hold.
#include <cmath>
#include <cstring>

#include "convert/fp16.h"
#include "convgate/core/float16.h"
#include "convgate/core/numbers.h"
#include "convgate/graph/internal/external_data.h"

namespace convgate::convert {
namespace {

// What the range report needs of a half-precision format.
struct HalfFormat {
  uint16_t (*from_float)(float);
  uint16_t infinity;       // its +inf bits
  float max;               // its largest finite value
  const char* flush_text;  // the magnitudes that round to 0
};

// float16: largest finite 65504 = (2 - 2^-10) * 2^15 (IEEE 754 binary16); nonzero magnitudes up
// to half its smallest subnormal (2^-24) round to 0.
const HalfFormat kFloat16{&FloatToHalf, 0x7c00u, 65504.0f, "2^-25 = 2.98e-08"};
// bfloat16: float32's exponent with 7 mantissa bits: largest finite (2 - 2^-7) * 2^127; its
// smallest subnormal is 2^-133.
const HalfFormat kBFloat16{&FloatToBFloat16, 0x7f80u, 3.3895313892515355e38f, "2^-134 = 4.6e-41"};

const HalfFormat& FormatOf(int32_t half_type) {
  return half_type == onnx::TensorProto::BFLOAT16 ? kBFloat16 : kFloat16;
}

// How many tensors a note names before "and N more".
constexpr size_t kTensorsNamed = 5;

Result<std::vector<float>> FloatValues(const onnx::TensorProto& tensor, const std::string& where) {
  std::vector<float> values;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    // Read from its data file (anchored by the converter: external_data.h) straight into the
    // values, one tensor at a time.
    Result<int64_t> length = graph::ExternalLength(tensor);
    if (!length.ok()) return length.status().WithContext(where);
    if (*length % static_cast<int64_t>(sizeof(float)) != 0) {
      return Status::DataLoss(where + " has " + std::to_string(*length) +
                              " bytes of external data, not a whole number of float32 values");
    }
    values.resize(static_cast<size_t>(*length) / sizeof(float));
    Status read = graph::ReadExternalInto(tensor, reinterpret_cast<char*>(values.data()));
    if (!read.ok()) return read.WithContext(where);
    return values;
  }
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    if (raw.size() % sizeof(float) != 0) {
      return Status::DataLoss(where + " has " + std::to_string(raw.size()) +
                              " bytes of raw data, not a whole number of float32 values");
    }
    values.resize(raw.size() / sizeof(float));
    // ONNX raw_data is little-endian, as is every host convgate builds for (x86-64, aarch64).
    std::memcpy(values.data(), raw.data(), raw.size());
    return values;
  }
  values.assign(tensor.float_data().begin(), tensor.float_data().end());
  return values;
}

void Count(std::map<std::string, int64_t>& by_tensor, const std::string& where) {
  ++by_tensor[where];
}

std::string NameTensors(const std::map<std::string, int64_t>& by_tensor) {
  std::string text;
  size_t named = 0;
  for (const auto& [where, count] : by_tensor) {
    if (named == kTensorsNamed) {
      text += ", and " + std::to_string(by_tensor.size() - named) + " more";
      break;
    }
    text += (named++ == 0 ? "" : ", ") + where + " (" + std::to_string(count) + ")";
  }
  return text;
}

}  // namespace

std::string HalfTypeName(int32_t half_type) {
  return half_type == onnx::TensorProto::BFLOAT16 ? "bfloat16" : "float16";
}

Status ConvertTensorToFloat16(onnx::TensorProto* tensor, bool clamp, const std::string& where,
                              Fp16RangeReport* range, int32_t half_type) {
  const HalfFormat& format = FormatOf(half_type);
  CONVGATE_ASSIGN_OR_RETURN(std::vector<float> values, FloatValues(*tensor, where));
  std::string raw(values.size() * 2, '\0');
  for (size_t idx = 0; idx < values.size(); ++idx) {
    float value = values[idx];
    uint16_t half = format.from_float(value);
    const bool finite = std::isfinite(value);
    if (finite && (half & 0x7fffu) == format.infinity) {  // a finite value rounded to +-inf
      ++range->overflow_values;
      Count(range->overflow_by_tensor, where);
      if (std::fabs(value) > range->largest_overflow) {
        range->largest_overflow = std::fabs(value);
        range->largest_overflow_tensor = where;
      }
      if (clamp) half = format.from_float(std::copysign(format.max, value));
    } else if (finite && value != 0.0f && (half & 0x7fffu) == 0) {
      ++range->flushed_values;
      Count(range->flushed_by_tensor, where);
    }
    raw[2 * idx] = static_cast<char>(half & 0xffu);
    raw[2 * idx + 1] = static_cast<char>(half >> 8);
  }
  tensor->clear_float_data();
  tensor->clear_external_data();
  tensor->set_data_location(onnx::TensorProto::DEFAULT);
  tensor->set_raw_data(std::move(raw));
  tensor->set_data_type(half_type);
  return Status::OK();
}

std::vector<std::string> Fp16RangeNotes(const Fp16RangeReport& range, bool clamp,
                                        int32_t half_type) {
  const HalfFormat& format = FormatOf(half_type);
  const std::string name = HalfTypeName(half_type);
  const std::string max = FormatSignificant(format.max);
  std::vector<std::string> notes;
  if (range.overflow_values > 0) {
    notes.push_back(std::to_string(range.overflow_values) + " value(s) in " +
                    std::to_string(range.overflow_by_tensor.size()) + " tensor(s) are outside " +
                    name + "'s range (|x| > " + max +
                    "): " + NameTensors(range.overflow_by_tensor) + "; the largest is " +
                    FormatSignificant(range.largest_overflow) + " in " +
                    range.largest_overflow_tensor + "; " +
                    (clamp ? "clamped to +-" + max + " (clamp=1)"
                           : "they became +-inf (pass clamp=1 to clamp them to +-" + max + ")"));
  }
  if (range.flushed_values > 0) {
    notes.push_back(std::to_string(range.flushed_values) + " nonzero value(s) in " +
                    std::to_string(range.flushed_by_tensor.size()) +
                    " tensor(s) are too small for " + name + " (|x| <= " + format.flush_text +
                    ") and became 0: " + NameTensors(range.flushed_by_tensor));
  }
  return notes;
}

}  // namespace convgate::convert
