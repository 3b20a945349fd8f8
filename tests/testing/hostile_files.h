// Hostile inputs made by code for the limits tests (issue 10): archives whose members inflate to
// gigabytes from a few megabytes, a model that never ends. Nothing large is ever written to disk
// or held in memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace convgate::testing {

// A valid .npz (a zip, zip64 sizes) holding one member, `member`.npy: a float32 vector of
// `elements` zeros, deflated. Deflate turns 258 zeros into a couple of bits, so the member's
// compressed size is about 1/1000 of its data (it passes the reader's ratio check): 5 GiB of
// zeros take 5 MB. The deflate stream is one block of 1 MiB of zeros compressed once and
// repeated (a full flush makes every block stand alone), so building it costs no time either.
// REQUIRES: elements * 4 is a multiple of 1 MiB.
std::string ZeroBombNpz(std::string_view member, uint64_t elements);

// ONNX text (testing::ParseOnnxText) of a Loop whose trip count is 1e12: it runs until something
// stops it (--run-timeout).
inline constexpr char kEndlessLoop[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[1] x) => (float[1] y) {
  trip = Constant <value = int64 {1000000000000}> ()
  cond = Constant <value = bool {1}> ()
  y = Loop (trip, cond, x) <body = body (int64 i, bool c, float[1] v) => (bool c_out, float[1] v_out) {
    c_out = Identity(c)
    v_out = Identity(v)
  }>
}
)";

}  // namespace convgate::testing
