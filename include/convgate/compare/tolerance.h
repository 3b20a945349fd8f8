// The elementwise tolerance: what "close enough" means for one element, written down once.
//
// An element passes when |t - s| <= atol + rtol * |s| (numpy.isclose with the source on the right).
// Integer and bool outputs compare exactly whatever the tolerances. The whole policy (which
// statistic is held to the tolerance, allowed mismatches, cosine and SNR floors, per-output and
// per-dtype values) is in policy.h.
#pragma once

namespace convgate::compare {

struct Tolerance {
  // LEAPP's defaults (compile_graph(validate=True, rtol=1e-3, atol=1e-5)), which convgate adopts:
  // loose enough for reordered fp32 accumulation, tight enough to catch a 1% weight change.
  double atol = 1e-5;
  double rtol = 1e-3;

  friend bool operator==(const Tolerance&, const Tolerance&) = default;
};

}  // namespace convgate::compare
