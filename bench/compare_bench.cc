// Times CompareTensors (every statistic, the histograms and the exact percentiles) on float32
// pairs, on one thread and on N, next to a plain SIMD read of the same two arrays: the floor any
// comparison that reads its inputs once must stand on.
//
// Usage: convgate-compare-bench [--threads N] [--repeat R] [--no-avx512] [SIZE ...]
//        (SIZE in elements; "16M")
// Prints one line per size, for bench/run.sh:
//   size=<n> threads=<N> read_1t=<s> read_nt=<s> compare_1t=<s> compare_nt=<s> mismatches=<k>
// Each time is the best of R runs. Data: source uniform in [-1, 1], target = source times
// (1 + noise of 1e-4), and 0.1% of elements off by 0.01 (outside the default tolerance), from a
// fixed seed.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "compare_bench.cc"
// Before everything else: foreach_target.h re-includes this file once per SIMD target.
// clang-format off
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "convgate/compare/tensor_compare.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace convgate::bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Sums both arrays with four independent accumulators (so the adds never wait on each other):
// as fast as the memory system delivers the bytes.
float SumBoth(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t count) {
  const hn::ScalableTag<float> d;
  const size_t lanes = hn::Lanes(d);
  auto sum0 = hn::Zero(d);
  auto sum1 = hn::Zero(d);
  auto sum2 = hn::Zero(d);
  auto sum3 = hn::Zero(d);
  size_t idx = 0;
  for (; idx + 2 * lanes <= count; idx += 2 * lanes) {
    sum0 = hn::Add(sum0, hn::LoadU(d, a + idx));
    sum1 = hn::Add(sum1, hn::LoadU(d, a + idx + lanes));
    sum2 = hn::Add(sum2, hn::LoadU(d, b + idx));
    sum3 = hn::Add(sum3, hn::LoadU(d, b + idx + lanes));
  }
  float total = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(sum0, sum1), hn::Add(sum2, sum3))));
  for (; idx < count; ++idx) total += a[idx] + b[idx];
  return total;
}

}  // namespace HWY_NAMESPACE
}  // namespace convgate::bench
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace convgate::bench {

HWY_EXPORT(SumBoth);

// SplitMix64 (as tests/compare/test_rng.h), inlined so the bench depends on nothing from tests.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
double Uniform(uint64_t& state) { return static_cast<double>(Next(state) >> 11) * 0x1.0p-53; }

std::pair<Tensor, Tensor> MakePair(int64_t count) {
  Tensor source = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({count})).value());
  Tensor target = std::move(Tensor::Allocate(DType::kFloat32, Shape::Of({count})).value());
  float* s = source.data<float>().data();
  float* t = target.data<float>().data();
  uint64_t state = 20261125;
  for (int64_t idx = 0; idx < count; ++idx) {
    s[idx] = static_cast<float>(2.0 * Uniform(state) - 1.0);
    // Relative noise well inside the default tolerance (atol 1e-5, rtol 1e-3).
    t[idx] = s[idx] * static_cast<float>(1.0 + 2e-4 * Uniform(state) - 1e-4);
    if (Next(state) % 1000 == 0) t[idx] += 0.01f;
  }
  return {std::move(source), std::move(target)};
}

// Best wall time of `repeat` runs of fn, in seconds.
double BestOf(int repeat, const std::function<void()>& fn) {
  double best = 1e300;
  for (int run = 0; run < repeat; ++run) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count());
  }
  return best;
}

// The read baseline on `threads` threads, each summing a contiguous slice of both arrays.
double ReadBoth(const float* a, const float* b, int64_t count, int threads) {
  std::vector<float> partial(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  const int64_t slice = (count + threads - 1) / threads;
  for (int worker = 0; worker < threads; ++worker) {
    const int64_t begin = std::min(count, worker * slice);
    const int64_t size = std::min(count, begin + slice) - begin;
    workers.emplace_back([&, worker, begin, size] {
      partial[static_cast<size_t>(worker)] =
          HWY_DYNAMIC_DISPATCH(SumBoth)(a + begin, b + begin, static_cast<size_t>(size));
    });
  }
  for (std::thread& thread : workers) thread.join();
  float total = 0;
  for (float value : partial) total += value;
  return total;
}

int64_t ParseSize(const std::string& text) {
  const char suffix = text.empty() ? '\0' : text.back();
  const int64_t scale = suffix == 'M' ? (1 << 20) : suffix == 'K' ? (1 << 10) : 1;
  return std::atoll(text.c_str()) * scale;
}

void RunSize(int64_t count, int threads, int repeat) {
  const auto [source, target] = MakePair(count);
  const float* s = source.data<float>().data();
  const float* t = target.data<float>().data();
  volatile double sink = 0;
  const double read_1t = BestOf(repeat, [&] { sink = sink + ReadBoth(s, t, count, 1); });
  const double read_nt = BestOf(repeat, [&] { sink = sink + ReadBoth(s, t, count, threads); });
  compare::CompareOptions one;
  one.threads = 1;
  compare::CompareOptions many;
  many.threads = threads;
  int64_t mismatches = 0;
  const double compare_1t = BestOf(repeat, [&] {
    mismatches = compare::CompareTensors(source, target, compare::Tolerance(), one).mismatches;
  });
  const double compare_nt = BestOf(repeat, [&] {
    mismatches = compare::CompareTensors(source, target, compare::Tolerance(), many).mismatches;
  });
  std::printf(
      "size=%lld threads=%d read_1t=%.6f read_nt=%.6f compare_1t=%.6f compare_nt=%.6f "
      "mismatches=%lld\n",
      static_cast<long long>(count), threads, read_1t, read_nt, compare_1t, compare_nt,
      static_cast<long long>(mismatches));
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeat = 3;
  std::vector<int64_t> sizes;
  for (int arg = 1; arg < argc; ++arg) {
    const std::string text = argv[arg];
    if (text == "--threads" && arg + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++arg]));
    } else if (text == "--no-avx512") {
      // For comparing SIMD widths on one machine: run-time dispatch then picks AVX2.
      hwy::DisableTargets(HWY_AVX3 | HWY_AVX3_DL);
    } else if (text == "--repeat" && arg + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++arg]));
    } else if (ParseSize(text) > 0) {
      sizes.push_back(ParseSize(text));
    } else {
      std::fprintf(stderr, "usage: %s [--threads N] [--repeat R] [--no-avx512] [SIZE ...]\n",
                   argv[0]);
      return 2;
    }
  }
  if (sizes.empty()) sizes = {int64_t{1} << 20, int64_t{16} << 20, int64_t{128} << 20};
  for (int64_t count : sizes) RunSize(count, threads, repeat);
  return 0;
}

}  // namespace convgate::bench

int main(int argc, char** argv) { return convgate::bench::Main(argc, argv); }
#endif  // HWY_ONCE
