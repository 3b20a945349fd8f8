// The floor of a two-model comparison in ONNX Runtime (bench/peers.sh): a bare C++ program that
// loads each model given on the command line into one session, one after the other (the previous
// session dropped first), and runs it once on zeros at its declared input shapes (symbolic
// dimensions as 1), at the graph optimization level convgate uses by default (extended). It
// compares nothing and writes nothing: whatever a tool holds or spends beyond this is its own.
//
// Usage: convgate-ort-floor MODEL.onnx [MODEL.onnx ...]
#include <onnxruntime_cxx_api.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// Zero-filled float inputs at the declared shapes; the floor's models take float32 images.
void RunOnZeros(Ort::Session& session) {
  Ort::AllocatorWithDefaultOptions allocator;
  std::vector<std::string> input_names, output_names;
  std::vector<std::vector<float>> buffers;
  std::vector<Ort::Value> inputs;
  Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
  for (size_t idx = 0; idx < session.GetInputCount(); ++idx) {
    input_names.push_back(session.GetInputNameAllocated(idx, allocator).get());
    std::vector<int64_t> dims =
        session.GetInputTypeInfo(idx).GetTensorTypeAndShapeInfo().GetShape();
    size_t count = 1;
    for (int64_t& dim : dims) count *= static_cast<size_t>(dim = dim < 0 ? 1 : dim);
    buffers.emplace_back(count, 0.0f);
    inputs.push_back(Ort::Value::CreateTensor<float>(memory, buffers.back().data(), count,
                                                     dims.data(), dims.size()));
  }
  for (size_t idx = 0; idx < session.GetOutputCount(); ++idx) {
    output_names.push_back(session.GetOutputNameAllocated(idx, allocator).get());
  }
  std::vector<const char*> in_ptrs, out_ptrs;
  for (const std::string& name : input_names) in_ptrs.push_back(name.c_str());
  for (const std::string& name : output_names) out_ptrs.push_back(name.c_str());
  session.Run(Ort::RunOptions{}, in_ptrs.data(), inputs.data(), inputs.size(), out_ptrs.data(),
              out_ptrs.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx [MODEL.onnx ...]\n", argv[0]);
    return 2;
  }
  try {
    Ort::Env env(ORT_LOGGING_LEVEL_ERROR, "floor");
    for (int arg = 1; arg < argc; ++arg) {
      Ort::SessionOptions options;
      options.SetGraphOptimizationLevel(ORT_ENABLE_EXTENDED);
      Ort::Session session(env, argv[arg], options);
      RunOnZeros(session);
    }
  } catch (const Ort::Exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 3;
  }
  return 0;
}
