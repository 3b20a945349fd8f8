// The floor of comparing two models over many samples in ONNX Runtime (bench/many_samples.sh): what
// a user's own loop does. Both models are loaded into sessions held together; then for each sample
// one input is filled with uniform [0, 1) floats, both sessions run on it, and the largest absolute
// difference of each output pair is folded into a running maximum. It keeps nothing per sample:
// whatever a tool holds or spends beyond this is its own.
//
// Usage: convgate-ort-samples SOURCE.onnx TARGET.onnx SAMPLES DIMS [nospin]   (DIMS: 1x3x48x192;
// the models take one float32 input at those dims). With two sessions taking turns, each
// session's idle intra-op threads spin while the other runs; "nospin" turns spinning off
// (session.intra_op.allow_spinning = 0), which is faster for large models.
#include <onnxruntime_cxx_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<int64_t> ParseDims(const std::string& text) {
  std::vector<int64_t> dims;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, 'x')) dims.push_back(std::stoll(part));
  return dims;
}

struct Names {
  std::vector<std::string> inputs, outputs;
  std::vector<const char*> input_ptrs, output_ptrs;
};

Names NamesOf(Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  Names names;
  for (size_t idx = 0; idx < session.GetInputCount(); ++idx) {
    names.inputs.push_back(session.GetInputNameAllocated(idx, allocator).get());
  }
  for (size_t idx = 0; idx < session.GetOutputCount(); ++idx) {
    names.outputs.push_back(session.GetOutputNameAllocated(idx, allocator).get());
  }
  for (const std::string& name : names.inputs) names.input_ptrs.push_back(name.c_str());
  for (const std::string& name : names.outputs) names.output_ptrs.push_back(name.c_str());
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s SOURCE.onnx TARGET.onnx SAMPLES DIMS [nospin]\n", argv[0]);
    return 2;
  }
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "samples");
    Ort::SessionOptions options;
    options.SetGraphOptimizationLevel(ORT_ENABLE_EXTENDED);
    if (argc == 6 && std::string(argv[5]) == "nospin") {
      options.AddConfigEntry("session.intra_op.allow_spinning", "0");
    }
    Ort::Session source(env, argv[1], options);
    Ort::Session target(env, argv[2], options);
    const Names source_names = NamesOf(source);
    const Names target_names = NamesOf(target);
    const int samples = std::atoi(argv[3]);
    std::vector<int64_t> dims = ParseDims(argv[4]);
    size_t count = 1;
    for (int64_t dim : dims) count *= static_cast<size_t>(dim);
    std::vector<float> buffer(count);
    Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    std::mt19937 prng(1);
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    double worst = 0;
    for (int sample = 0; sample < samples; ++sample) {
      for (float& value : buffer) value = uniform(prng);
      Ort::Value input =
          Ort::Value::CreateTensor<float>(memory, buffer.data(), count, dims.data(), dims.size());
      std::vector<Ort::Value> expected =
          source.Run(Ort::RunOptions{}, source_names.input_ptrs.data(), &input, 1,
                     source_names.output_ptrs.data(), source_names.output_ptrs.size());
      std::vector<Ort::Value> actual =
          target.Run(Ort::RunOptions{}, target_names.input_ptrs.data(), &input, 1,
                     target_names.output_ptrs.data(), target_names.output_ptrs.size());
      for (size_t out = 0; out < expected.size() && out < actual.size(); ++out) {
        const size_t elements = expected[out].GetTensorTypeAndShapeInfo().GetElementCount();
        const float* a = expected[out].GetTensorData<float>();
        const float* b = actual[out].GetTensorData<float>();
        for (size_t idx = 0; idx < elements; ++idx) {
          worst = std::max(worst, static_cast<double>(std::fabs(a[idx] - b[idx])));
        }
      }
    }
    std::printf("samples=%d max_abs_diff=%g\n", samples, worst);
  } catch (const Ort::Exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 3;
  }
  return 0;
}
