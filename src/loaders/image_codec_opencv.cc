// libconvgate_image_codec.so: images decoded by OpenCV's imgcodecs and fitted by imgproc
// (loaders/image_codec.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>

#include "convgate/core/module_loader.h"
#include "loaders/image_codec.h"

namespace convgate::loaders {
namespace {

// Grey 114: what YOLO exports were trained to see in the padding.
constexpr int kLetterboxGrey = 114;

// Any depth to 8 bits: a 16-bit PNG's 0..65535 becomes 0..255.
cv::Mat To8Bit(const cv::Mat& image) {
  if (image.depth() == CV_8U) return image;
  cv::Mat converted;
  const double scale = image.depth() == CV_16U ? 1.0 / 257.0 : 1.0;
  image.convertTo(converted, CV_8U, scale);
  return converted;
}

// OpenCV decodes to BGR(A) or grey; the request wants 1, 3 or 4 channels in its colour order.
cv::Mat ToChannels(const cv::Mat& image, const ImageRequest& request) {
  const bool rgb = request.color == ColorOrder::kRgb;
  cv::Mat out;
  switch (request.channels) {
    case 1:
      if (image.channels() == 1) return image;
      cv::cvtColor(image, out, image.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
      return out;
    case 4:
      if (image.channels() == 1) {
        cv::cvtColor(image, out, rgb ? cv::COLOR_GRAY2RGBA : cv::COLOR_GRAY2BGRA);
      } else if (image.channels() == 3) {
        cv::cvtColor(image, out, rgb ? cv::COLOR_BGR2RGBA : cv::COLOR_BGR2BGRA);
      } else {
        if (!rgb) return image;
        cv::cvtColor(image, out, cv::COLOR_BGRA2RGBA);
      }
      return out;
    default:
      if (image.channels() == 1) {
        cv::cvtColor(image, out, rgb ? cv::COLOR_GRAY2RGB : cv::COLOR_GRAY2BGR);
      } else if (image.channels() == 4) {
        cv::cvtColor(image, out, rgb ? cv::COLOR_BGRA2RGB : cv::COLOR_BGRA2BGR);
      } else {
        if (!rgb) return image;
        cv::cvtColor(image, out, cv::COLOR_BGR2RGB);
      }
      return out;
  }
}

cv::Mat Fit(const cv::Mat& image, const ImageRequest& request) {
  const cv::Size target(request.width, request.height);
  if (image.size() == target) return image;
  // INTER_AREA when shrinking (no aliasing), bilinear when enlarging: PIL's and torchvision's
  // antialiased resize sit between the two; --resize-mode does not choose the filter.
  const auto interpolation = [&](double scale) {
    return scale < 1.0 ? cv::INTER_AREA : cv::INTER_LINEAR;
  };
  cv::Mat out;
  if (request.fit == ImageFit::kStretch) {
    const double scale = std::min(static_cast<double>(target.width) / image.cols,
                                  static_cast<double>(target.height) / image.rows);
    cv::resize(image, out, target, 0, 0, interpolation(scale));
    return out;
  }
  const double sx = static_cast<double>(target.width) / image.cols;
  const double sy = static_cast<double>(target.height) / image.rows;
  const double scale = request.fit == ImageFit::kLetterbox ? std::min(sx, sy) : std::max(sx, sy);
  const cv::Size scaled(std::max(1, static_cast<int>(std::lround(image.cols * scale))),
                        std::max(1, static_cast<int>(std::lround(image.rows * scale))));
  cv::Mat resized;
  cv::resize(image, resized, scaled, 0, 0, interpolation(scale));
  if (request.fit == ImageFit::kLetterbox) {
    const int left = (target.width - scaled.width) / 2;
    const int top = (target.height - scaled.height) / 2;
    cv::copyMakeBorder(resized, out, top, target.height - scaled.height - top, left,
                       target.width - scaled.width - left, cv::BORDER_CONSTANT,
                       cv::Scalar::all(kLetterboxGrey));
    return out;
  }
  const int x = (scaled.width - target.width) / 2;
  const int y = (scaled.height - target.height) / 2;
  return resized(cv::Rect(x, y, target.width, target.height)).clone();
}

// OpenCV reads its pixel limit from the environment once, at its first decode; a user's own
// setting wins.
void LimitPixels(int64_t max_pixels) {
  static const bool once = [max_pixels] {
    if (std::getenv("OPENCV_IO_MAX_IMAGE_PIXELS") == nullptr) {
      ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", std::to_string(max_pixels).c_str(), 0);
    }
    return true;
  }();
  (void)once;
}

std::string Decode(std::string_view bytes, const ImageRequest& request, DecodedImage& decoded) {
  LimitPixels(request.max_pixels);
  try {
    const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
    const cv::Mat image = cv::imdecode(buffer, cv::IMREAD_UNCHANGED);
    if (image.empty() || image.cols <= 0 || image.rows <= 0) {
      return "cannot be decoded as an image (OpenCV reads JPEG, PNG, BMP, TIFF, WebP)";
    }
    if (image.channels() != 1 && image.channels() != 3 && image.channels() != 4) {
      return "has " + std::to_string(image.channels()) + " channels; 1, 3 or 4 are read";
    }
    decoded.source_width = image.cols;
    decoded.source_height = image.rows;
    decoded.source_channels = image.channels();
    cv::Mat fitted = Fit(ToChannels(To8Bit(image), request), request);
    if (!fitted.isContinuous()) fitted = fitted.clone();
    decoded.pixels.assign(fitted.data, fitted.data + fitted.total() * fitted.elemSize());
    return "";
  } catch (const cv::Exception& e) {
    if (std::string_view(e.what()).find("CV_IO_MAX_IMAGE_PIXELS") != std::string_view::npos) {
      return "declares more than " + std::to_string(request.max_pixels) +
             " pixels (--max-tensor-bytes / 4): refused before decoding";
    }
    return std::string("cannot be decoded as an image: ") + e.what();
  }
}

}  // namespace
}  // namespace convgate::loaders

extern "C" const convgate::loaders::ImageCodec* convgate_image_codec() {
  static const convgate::loaders::ImageCodec kCodec{
      convgate::loaders::kImageCodecAbi, convgate::ModuleBuildId(), &convgate::loaders::Decode};
  return &kCodec;
}
