// --data image: throughput against OpenCV doing the same work by hand, in one process.
//
// Usage: convgate-data-loader-bench [--images N] [--repeat R] [DIR]
// Writes N JPEG scenes of 640x480 into DIR (default: a temporary folder), then times, per image:
//   opencv_decode  cv::imdecode of the file's bytes alone (OpenCV's own decode rate)
//   opencv_full    read, decode, BGR->RGB, resize to 224x224, scale and normalize into a float32
//                  NCHW buffer: what a hand-written loader does
//   convgate       loaders::LoadData of the folder into [1,3,224,224] float32 samples (the same
//                  work plus the sha256 of every file, recorded in the report)
// and prints one line: images=<n> opencv_decode=<img/s> opencv_full=<img/s> convgate=<img/s>
// ratio=<convgate/opencv_full>. Each time is the best of R runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "convgate/core/temp_dir.h"
#include "convgate/loaders/load_data.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename Fn>
double Best(int repeat, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto start = Clock::now();
    fn();
    best = std::min(best, Seconds(start));
  }
  return best;
}

void WriteScenes(const fs::path& dir, int count) {
  cv::RNG rng(7);
  for (int i = 0; i < count; ++i) {
    cv::Mat scene(480, 640, CV_8UC3);
    rng.fill(scene, cv::RNG::UNIFORM, 0, 64);
    for (int k = 0; k < 12; ++k) {
      const cv::Point center(rng.uniform(0, 640), rng.uniform(0, 480));
      cv::circle(scene, center, rng.uniform(10, 120),
                 cv::Scalar(rng.uniform(0, 255), rng.uniform(0, 255), rng.uniform(0, 255)),
                 cv::FILLED);
    }
    cv::putText(scene, "sample " + std::to_string(i), cv::Point(20, 60), cv::FONT_HERSHEY_SIMPLEX,
                2.0, cv::Scalar(255, 255, 255), 3);
    char name[32];
    std::snprintf(name, sizeof(name), "img_%04d.jpg", i);
    cv::imwrite((dir / name).string(), scene);
  }
}

std::vector<std::string> ReadAll(const std::vector<fs::path>& files) {
  std::vector<std::string> bytes;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return bytes;
}

// What a hand-written loader does for one file, into `out` (3 x 224 x 224 floats).
void OpenCvFull(const fs::path& file, std::vector<float>& out) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
  cv::Mat image = cv::imdecode(buffer, cv::IMREAD_COLOR);
  cv::cvtColor(image, image, cv::COLOR_BGR2RGB);
  cv::resize(image, image, cv::Size(224, 224), 0, 0, cv::INTER_AREA);
  static const float kMean[3] = {0.485f, 0.456f, 0.406f}, kStd[3] = {0.229f, 0.224f, 0.225f};
  for (int y = 0; y < 224; ++y) {
    const uint8_t* row = image.ptr<uint8_t>(y);
    for (int x = 0; x < 224; ++x) {
      for (int c = 0; c < 3; ++c) {
        out[(c * 224 + y) * 224 + x] = (row[x * 3 + c] / 255.0f - kMean[c]) / kStd[c];
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int count = 64, repeat = 3;
  std::string dir_arg;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--images" && i + 1 < argc) {
      count = std::atoi(argv[++i]);
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      dir_arg = arg;
    }
  }
  std::optional<convgate::TempDir> temp;
  fs::path dir = dir_arg;
  if (dir.empty()) {
    temp.emplace(convgate::TempDir::Create("data-loader-bench").value());
    dir = temp->path();
  }
  if (fs::is_empty(dir)) WriteScenes(dir, count);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  const double n = static_cast<double>(files.size());

  const std::vector<std::string> bytes = ReadAll(files);
  const double decode = Best(repeat, [&] {
    for (const std::string& b : bytes) {
      const cv::Mat buffer(1, static_cast<int>(b.size()), CV_8U, const_cast<char*>(b.data()));
      cv::Mat image = cv::imdecode(buffer, cv::IMREAD_COLOR);
      if (image.empty()) std::abort();
    }
  });
  std::vector<float> out(3 * 224 * 224);
  const double full = Best(repeat, [&] {
    for (const fs::path& file : files) OpenCvFull(file, out);
  });

  convgate::Signature signature;
  convgate::TensorInfo input;
  input.name = "x";
  input.dtype = convgate::DType::kFloat32;
  input.type_name = "float32";
  input.has_shape = true;
  input.shape = {convgate::Dim::Fixed(1), convgate::Dim::Fixed(3), convgate::Dim::Fixed(224),
                 convgate::Dim::Fixed(224)};
  signature.inputs.push_back(input);
  convgate::loaders::LoaderOptions options;
  options.specs.push_back(convgate::loaders::ParseDataSpec("image:" + dir.string()).value());
  (void)convgate::loaders::ParseNormalize("imagenet", options.image);
  const double loader = Best(repeat, [&] {
    auto dataset = convgate::loaders::LoadData(options, signature, convgate::inputs::InputOptions(),
                                               convgate::Limits());
    if (!dataset.ok() || dataset->samples.size() != files.size()) {
      std::fprintf(stderr, "LoadData: %s\n", dataset.status().ToString().c_str());
      std::exit(1);
    }
  });
  std::printf("images=%zu opencv_decode=%.1f opencv_full=%.1f convgate=%.1f ratio=%.2f\n",
              files.size(), n / decode, n / full, n / loader, full / loader);
  return 0;
}
