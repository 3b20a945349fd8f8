// The contract between convgate and libconvgate_image_codec.so: decoding and resizing images with
// OpenCV's imgcodecs and imgproc, a module loaded on first use (core/module_loader.h). Debian's
// imgcodecs brings GDAL, GDCM, OpenEXR and ~80 other libraries; linked, every convgate process
// would map them, and only --data image: needs them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/loaders/data_spec.h"

namespace convgate::loaders {

// Bumped whenever ImageCodec, or anything passed through it, changes.
inline constexpr int kImageCodecAbi = 2;

struct ImageRequest {
  int channels = 3;  // 1: grey, 3: colour in `color` order, 4: colour then alpha (255 if none)
  ColorOrder color = ColorOrder::kRgb;
  int width = 0;  // the fitted image's size
  int height = 0;
  ImageFit fit = ImageFit::kStretch;
  // Pixels a file may declare: a 60-byte PNG can claim 100000 x 100000, and decoding it would
  // allocate 30 GB before failing. Applied by OpenCV as it reads the header (its
  // OPENCV_IO_MAX_IMAGE_PIXELS, which it reads once per process: the first request's value).
  int64_t max_pixels = int64_t{1} << 28;
};

struct DecodedImage {
  int source_width = 0;  // as stored in the file
  int source_height = 0;
  int source_channels = 0;
  std::vector<uint8_t> pixels;  // height x width x channels, interleaved, 8 bits
};

struct ImageCodec {
  int abi;            // kImageCodecAbi of the module's build
  const char* build;  // ModuleBuildId() of the module's build
  // Decodes a JPEG/PNG/BMP (whatever imgcodecs reads) held in `bytes` and fits it to `request`.
  // Returns an empty string on success, else why the bytes are not an image.
  std::string (*decode)(std::string_view bytes, const ImageRequest& request, DecodedImage& image);
};

}  // namespace convgate::loaders

// Defined by the module (image_codec_opencv.cc), the one symbol it exports.
extern "C" __attribute__((visibility("default"))) const convgate::loaders::ImageCodec*
convgate_image_codec();
