// The floor of `convgate bench` on ONNX Runtime (bench/speed.sh): a bare latency loop, what a
// user's own timing of one session would measure. The session is made as convgate makes its own
// (src/backends/onnxruntime/ort_session.cc: graph optimization extended, the given intra-op
// threads, sequential execution, ORT's default intra-op spinning); every input is filled once
// with uniform [0, 1) floats (symbolic dims 1, unless DIMS gives the shape of a single-input
// model); then WARMUP untimed and ITERATIONS timed Run calls, each asking for every output.
// Prints one JSON line: {"p50_ms":..,"p90_ms":..,"p99_ms":..,"mean_ms":..,"min_ms":..,
// "iterations":..}, percentiles interpolated between ranks as convgate's are
// (src/bench/latency.cc).
//
// Usage: convgate-ort-latency MODEL WARMUP ITERATIONS THREADS [DIMS]   (THREADS 0: ORT's
// default; DIMS: 1x3x48x192)
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> ParseDims(const std::string& text) {
  std::vector<int64_t> dims;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, 'x')) dims.push_back(std::stoll(part));
  return dims;
}

double PercentileOfSorted(const std::vector<double>& sorted, double q) {
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - static_cast<double>(below));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL WARMUP ITERATIONS THREADS [DIMS]\n", argv[0]);
    return 2;
  }
  const int warmup = std::atoi(argv[2]);
  const int iterations = std::atoi(argv[3]);
  const int threads = std::atoi(argv[4]);
  if (warmup < 0 || iterations < 1 || threads < 0) {
    std::fprintf(stderr, "WARMUP and THREADS must be >= 0 and ITERATIONS >= 1\n");
    return 2;
  }
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "latency");
    env.DisableTelemetryEvents();
    Ort::SessionOptions options;
    options.SetIntraOpNumThreads(threads);
    options.SetGraphOptimizationLevel(ORT_ENABLE_EXTENDED);
    Ort::Session session(env, argv[1], options);

    Ort::AllocatorWithDefaultOptions allocator;
    std::vector<std::string> input_names, output_names;
    for (size_t idx = 0; idx < session.GetInputCount(); ++idx) {
      input_names.push_back(session.GetInputNameAllocated(idx, allocator).get());
    }
    for (size_t idx = 0; idx < session.GetOutputCount(); ++idx) {
      output_names.push_back(session.GetOutputNameAllocated(idx, allocator).get());
    }
    if (argc == 6 && input_names.size() != 1) {
      std::fprintf(stderr, "DIMS needs a model with one input; %s has %zu\n", argv[1],
                   input_names.size());
      return 2;
    }

    // The inputs are made once, outside the timed loop, as benchmark_app's are.
    std::mt19937 prng(1);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<Ort::Value> inputs;
    for (size_t idx = 0; idx < input_names.size(); ++idx) {
      const Ort::TypeInfo type = session.GetInputTypeInfo(idx);
      const Ort::ConstTensorTypeAndShapeInfo info = type.GetTensorTypeAndShapeInfo();
      if (info.GetElementType() != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) {
        std::fprintf(stderr, "input '%s' is not float32; only float32 inputs are filled\n",
                     input_names[idx].c_str());
        return 2;
      }
      std::vector<int64_t> dims = argc == 6 ? ParseDims(argv[5]) : info.GetShape();
      for (int64_t& dim : dims) dim = dim < 0 ? 1 : dim;
      Ort::Value value = Ort::Value::CreateTensor<float>(allocator, dims.data(), dims.size());
      float* data = value.GetTensorMutableData<float>();
      const size_t count = value.GetTensorTypeAndShapeInfo().GetElementCount();
      for (size_t element = 0; element < count; ++element) data[element] = uniform(prng);
      inputs.push_back(std::move(value));
    }
    std::vector<const char*> input_ptrs, output_ptrs;
    for (const std::string& name : input_names) input_ptrs.push_back(name.c_str());
    for (const std::string& name : output_names) output_ptrs.push_back(name.c_str());

    const auto run = [&] {
      return session.Run(Ort::RunOptions{}, input_ptrs.data(), inputs.data(), inputs.size(),
                         output_ptrs.data(), output_ptrs.size());
    };
    for (int idx = 0; idx < warmup; ++idx) run();
    std::vector<double> ms;
    ms.reserve(static_cast<size_t>(iterations));
    for (int idx = 0; idx < iterations; ++idx) {
      const Clock::time_point start = Clock::now();
      std::vector<Ort::Value> outputs = run();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    double sum = 0;
    for (double value : ms) sum += value;
    std::printf(
        "{\"p50_ms\":%.6f,\"p90_ms\":%.6f,\"p99_ms\":%.6f,\"mean_ms\":%.6f,\"min_ms\":%.6f,"
        "\"iterations\":%d}\n",
        PercentileOfSorted(ms, 50), PercentileOfSorted(ms, 90), PercentileOfSorted(ms, 99),
        sum / static_cast<double>(ms.size()), ms.front(), iterations);
  } catch (const Ort::Exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 3;
  }
  return 0;
}
