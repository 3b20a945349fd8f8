// The noise floor: how much a faithful implementation of the source may differ from it on these
// inputs, measured by running the source a second time under a benign change (ONNX Runtime's
// optimization level disabled against the gate's, one thread against many). A fixed float32
// tolerance cannot tell a faithful runtime's rounding from a fault (ONNX Runtime differs from
// itself by 2.8e-3 between optimization levels on a detector fed [0, 255]); the floor can.
//
// A tolerance nobody set becomes max(its default, kNoiseFloorFactor x floor), and every error is
// reported as a multiple of its floor ("3.1x the noise floor").
#pragma once

#include <string>

namespace convgate::compare {

// How many times its measured floor a faithful implementation may differ by. One benign change
// samples the spread of faithful implementations once; another runtime (a different convolution
// algorithm, another summation order) lands within a few times that. 8 leaves room for that and
// stays far below what a fault does: the measured detection margins are in docs/policy.md.
inline constexpr double kNoiseFloorFactor = 8.0;

// One tensor's floor: the largest difference between the source and its benign variant.
struct NoiseFloor {
  double max_abs = 0.0;  // max |s - s'| over the finite pairs of every calibrated sample
  double max_rel = 0.0;  // max |s - s'| / max(|s|, kRelErrorFloor) over the same pairs
  int samples = 0;       // samples it was measured on
};

}  // namespace convgate::compare
