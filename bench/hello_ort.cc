// The start-up baseline for bench/startup.py: a C++ hello-world linked only with ONNX Runtime,
// i.e. what any native tool that can run an ONNX model pays before doing anything.
#include <onnxruntime_c_api.h>

#include <cstdio>

int main() {
  std::printf("hello from a program linked with ONNX Runtime %s\n",
              OrtGetApiBase()->GetVersionString());
  return 0;
}
