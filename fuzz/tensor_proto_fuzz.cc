// libFuzzer entry point for the ONNX TensorProto reader. Not part of the default build; build by
// hand, e.g.
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -DONNX_NAMESPACE=onnx \
//     -DONNX_ML=1 -Iinclude -Isrc fuzz/tensor_proto_fuzz.cc src/io/tensor_proto.cc \
//     src/core/*.cc -lonnx_proto -lprotobuf -lcrypto -o tensor_proto_fuzz
// Seed it with /usr/share/libonnx-testdata/data/node/*/test_data_set_0/*.pb.
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
