// A benchmark in the console form of every report that carries one (bench, and
// compare/verify --benchmark). report.json's form is json/benchmark.h.
#pragma once

#include <string>

#include "convgate/bench/records.h"

namespace convgate::report::internal {

// The settings and machine line, one row per side (load, first inference, latency percentiles,
// throughput, memory), the speed verdict and every warning.
std::string BenchmarkSection(const bench::BenchmarkRecord& record, bool color);
}  // namespace convgate::report::internal
