// Fuzz target for the ONNX TensorProto reader (input_K.pb / output_K.pb of test cases). Seeds:
// fuzz/make_seeds.cc; /usr/share/libonnx-testdata/data/node/*/test_data_set_0/*.pb are good extra
// seeds for a long local run.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "convgate/io/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::io::NamedTensorProto> proto =
      convgate::io::ParseTensorProto(bytes, "fuzz.pb");
  // A tensor that parsed must serialize and parse back to itself.
  if (proto.ok()) {
    convgate::Result<convgate::io::NamedTensorProto> again = convgate::io::ParseTensorProto(
        convgate::io::SerializeTensorProto(proto->tensor, proto->name), "again.pb");
    if (!again.ok() || !again->tensor.BitwiseEquals(proto->tensor)) __builtin_trap();
  }
  return 0;
}
