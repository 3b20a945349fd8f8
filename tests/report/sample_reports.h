// Fixed results of each workflow (a compare, a verify with its conversion and end-to-end run, a
// reduce with its per-node comparison and reproduction): the golden files are rendered from them
// (golden_test.cc) and the report.json round trip reads them back (read_report_test.cc).
#pragma once

#include "convgate/gate/reduce.h"
#include "convgate/gate/verify.h"

namespace convgate::report::sample_reports {

// Two samples of two outputs: logits always within tolerance, boxes off by 0.05 at one element
// of sample 1 and NaN at another.
gate::CompareReport Comparison();
// Comparison() as the comparison of a verify that converted to float16.
gate::VerifyReport Verification();
// One tensor on one sample as per-node validation condenses it.
gate::NodeSampleResult NodeSample(int sample, bool passed, double max_abs_error);
// The comparison of Comparison(), run per node, reduced to the Conv that breaks boxes.
gate::ReduceReport Reduction();

}  // namespace convgate::report::sample_reports
