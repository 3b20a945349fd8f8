// --data image: files decoded and fitted by the image codec module, then laid out and normalized
// into rows of the input.
#include <cmath>
#include <mutex>

#include "convgate/core/module_loader.h"
#include "convgate/core/numbers.h"
#include "convgate/core/units.h"
#include "loaders/image_codec.h"
#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

const std::vector<std::string> kImageExtensions = {".bmp", ".jpeg", ".jpg", ".png",
                                                   ".tif", ".tiff", ".webp"};

Result<const ImageCodec*> Codec() {
  static std::once_flag once;
  static Result<const ImageCodec*> codec = Status::Internal("not loaded");
  std::call_once(once, [] {
    Result<LoadedModule> module =
        LoadModule("libconvgate_image_codec.so", "convgate_image_codec", "image codec");
    if (!module.ok()) {
      codec = module.status().WithContext(
          "--data image needs OpenCV's imgcodecs (scripts/setup.sh "
          "installs it)");
      return;
    }
    using Entry = const ImageCodec* (*)();
    const ImageCodec* entry = reinterpret_cast<Entry>(module->entry)();
    Status build =
        CheckModuleBuild(*module, "image codec", entry->abi, kImageCodecAbi, entry->build);
    codec = build.ok() ? Result<const ImageCodec*>(entry) : Result<const ImageCodec*>(build);
  });
  return codec;
}

bool ChannelCount(int64_t size) { return size == 1 || size == 3 || size == 4; }

// Where an image input keeps its channels, and how many it takes.
struct Geometry {
  bool channels_last = false;
  int channels = 3;
  int height = 0;
  int width = 0;
};

Result<Geometry> GeometryOf(const InputPlan& plan, const ImageOptions& options) {
  const std::string& name = plan.info->name;
  const size_t offset = plan.batched ? 1 : 0;
  if (plan.shape.size() != offset + 3) {
    return Status::InvalidArgument("--data image: input '" + name + "' is " +
                                   FormatDims(*plan.info) +
                                   "; an image input has rank 4 (a batch of images) or 3");
  }
  const auto known_channels = [&](size_t axis) {
    return plan.fixed[axis] && ChannelCount(plan.shape[axis]);
  };
  Geometry geometry;
  switch (options.layout) {
    case ImageLayout::kNchw:
      geometry.channels_last = false;
      break;
    case ImageLayout::kNhwc:
      geometry.channels_last = true;
      break;
    case ImageLayout::kAuto:
      if (known_channels(offset)) {
        geometry.channels_last = false;
      } else if (known_channels(offset + 2)) {
        geometry.channels_last = true;
      } else if (plan.info->hint.channels > 0) {
        geometry.channels_last = false;  // its first Conv reads dim 1
      } else {
        return Status::InvalidArgument("--data image: cannot tell where input '" + name + "' " +
                                       FormatDims(*plan.info) +
                                       " keeps its channels: give --layout nchw or nhwc");
      }
  }
  const size_t channel_axis = geometry.channels_last ? offset + 2 : offset;
  const size_t height_axis = geometry.channels_last ? offset : offset + 1;
  int64_t channels = plan.shape[channel_axis];
  if (!plan.fixed[channel_axis])
    channels = plan.info->hint.channels > 0 ? plan.info->hint.channels : 3;
  if (!ChannelCount(channels)) {
    return Status::InvalidArgument("--data image: input '" + name + "' " + FormatDims(*plan.info) +
                                   " has " + std::to_string(channels) +
                                   " channels; images give 1 (grey), 3 or 4 (with --layout " +
                                   (geometry.channels_last ? "nhwc" : "nchw") + ")");
  }
  geometry.channels = static_cast<int>(channels);
  const bool fixed = plan.fixed[height_axis] && plan.fixed[height_axis + 1];
  if (options.width > 0) {
    if (fixed && (plan.shape[height_axis] != options.height ||
                  plan.shape[height_axis + 1] != options.width)) {
      return Status::InvalidArgument("--resize " + std::to_string(options.width) + "x" +
                                     std::to_string(options.height) + " disagrees with input '" +
                                     name + "' " + FormatDims(*plan.info) + ", which takes " +
                                     std::to_string(plan.shape[height_axis + 1]) + "x" +
                                     std::to_string(plan.shape[height_axis]) + " (width x height)");
    }
    geometry.width = options.width;
    geometry.height = options.height;
  } else if (fixed) {
    geometry.height = static_cast<int>(plan.shape[height_axis]);
    geometry.width = static_cast<int>(plan.shape[height_axis + 1]);
  } else {
    return Status::InvalidArgument("--data image: input '" + name + "' " + FormatDims(*plan.info) +
                                   " has a dynamic height or width: give --resize WIDTHxHEIGHT");
  }
  return geometry;
}

// Per-channel affine map of a pixel: value = pixel * scale[c] + shift[c].
struct PixelMap {
  std::vector<double> scale, shift;
};

Result<PixelMap> PixelMapOf(const InputPlan& plan, const ImageOptions& options, int channels) {
  const bool floating = IsFloating(plan.dtype);
  if (!floating && (!options.mean.empty() || options.scale.has_value())) {
    return Status::InvalidArgument("--normalize and --pixel-scale need a floating-point input; '" +
                                   plan.info->name + "' is " + std::string(DTypeName(plan.dtype)) +
                                   " and takes raw pixels");
  }
  const double scale = options.scale.value_or(floating ? 1.0 / 255.0 : 1.0);
  const auto per_channel = [&](const std::vector<double>& values, double fallback,
                               const char* what) -> Result<std::vector<double>> {
    if (values.empty()) return std::vector<double>(channels, fallback);
    if (values.size() == 1) return std::vector<double>(channels, values[0]);
    if (static_cast<int>(values.size()) == channels) return values;
    return Status::InvalidArgument("--normalize gives " + std::to_string(values.size()) + " " +
                                   what + " values; input '" + plan.info->name + "' has " +
                                   std::to_string(channels) + " channels");
  };
  CONVGATE_ASSIGN_OR_RETURN(std::vector<double> mean, per_channel(options.mean, 0.0, "mean"));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<double> std, per_channel(options.std, 1.0, "std"));
  PixelMap map;
  for (int c = 0; c < channels; ++c) {
    map.scale.push_back(scale / std[c]);
    map.shift.push_back(-mean[c] / std[c]);
  }
  return map;
}

std::string Describe(const Geometry& geometry, const ImageOptions& options, const PixelMap& map,
                     const InputPlan& plan) {
  static constexpr const char* kFits[] = {"stretched", "letterboxed", "centre-cropped"};
  std::string text = std::to_string(geometry.width) + "x" + std::to_string(geometry.height) + " " +
                     kFits[static_cast<int>(options.fit)] + ", " +
                     (geometry.channels == 1              ? "grey"
                      : options.color == ColorOrder::kRgb ? "RGB"
                                                          : "BGR") +
                     (geometry.channels == 4 ? "A" : "") + ", " +
                     (geometry.channels_last ? "NHWC" : "NCHW");
  if (IsFloating(plan.dtype)) {
    const double shift = map.shift[0];
    text += ", value = pixel x " + FormatSignificant(map.scale[0], 6);
    if (shift != 0) text += (shift > 0 ? " + " : " - ") + FormatSignificant(std::abs(shift), 6);
    if (!options.normalize_name.empty())
      text += " (" + options.normalize_name + ")";
    else if (geometry.channels > 1 && map.scale.size() > 1 && map.scale[1] != map.scale[0]) {
      text += " on channel 0 (per channel: --normalize)";
    }
  } else {
    text += ", raw pixels";
  }
  return text;
}

Result<Tensor> RowOf(const DecodedImage& image, const Geometry& geometry, const PixelMap& map,
                     const InputPlan& plan) {
  std::vector<int64_t> dims;
  if (plan.batched) dims.push_back(1);
  const int64_t c = geometry.channels, h = geometry.height, w = geometry.width;
  if (geometry.channels_last) {
    dims.insert(dims.end(), {h, w, c});
  } else {
    dims.insert(dims.end(), {c, h, w});
  }
  CONVGATE_ASSIGN_OR_RETURN(Tensor row, Tensor::Allocate(plan.dtype, Shape::Make(dims).value()));
  const uint8_t* pixels = image.pixels.data();
  const auto index = [&](int64_t y, int64_t x, int64_t ch) {
    return geometry.channels_last ? (y * w + x) * c + ch : (ch * h + y) * w + x;
  };
  if (plan.dtype == DType::kFloat32) {
    std::span<float> out = row.data<float>();
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const double pixel = pixels[(y * w + x) * c + ch];
          out[index(y, x, ch)] = static_cast<float>(pixel * map.scale[ch] + map.shift[ch]);
        }
      }
    }
    return row;
  }
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const double pixel = pixels[(y * w + x) * c + ch];
        row.SetDouble(index(y, x, ch), pixel * map.scale[ch] + map.shift[ch]);
      }
    }
  }
  return row;
}

}  // namespace

Result<Rows> LoadImageRows(const DataSpec& spec, const InputPlan& plan, const ImageOptions& options,
                           const Limits& limits, bool lazy) {
  CONVGATE_RETURN_IF_ERROR(CheckNumericInput(plan, "image"));
  CONVGATE_ASSIGN_OR_RETURN(Geometry geometry, GeometryOf(plan, options));
  CONVGATE_ASSIGN_OR_RETURN(PixelMap map, PixelMapOf(plan, options, geometry.channels));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files,
                            ListDataFiles(spec.path, kImageExtensions, "image"));
  // Rows decoded at once are held until the samples are made: refuse a folder whose rows cannot
  // fit before decoding any (--samples keeps the first N only after loading).
  const int64_t row_bytes = static_cast<int64_t>(DTypeSize(plan.dtype)) * geometry.channels *
                            geometry.height * geometry.width;
  const int64_t all_bytes = row_bytes * static_cast<int64_t>(files.size());
  if (!lazy && row_bytes > 0 && all_bytes / row_bytes == static_cast<int64_t>(files.size()) &&
      all_bytes > limits.max_run_bytes) {
    return Status::FailedPrecondition(
        "--data " + spec.path + ": " + std::to_string(files.size()) + " images of " +
        FormatBytes(row_bytes) + " each as input '" + plan.info->name + "' need " +
        FormatBytes(all_bytes) + ", over the limit of " + FormatBytes(limits.max_run_bytes) +
        " (--max-run-bytes): name fewer files (a glob) or raise the limit");
  }
  CONVGATE_ASSIGN_OR_RETURN(const ImageCodec* codec, Codec());
  // A decoded image is held as 8-bit RGBA at most: its pixels are held to --max-tensor-bytes.
  const ImageRequest request{geometry.channels, options.color, geometry.width,
                             geometry.height,   options.fit,   limits.max_tensor_bytes / 4};
  // What a row needs of the plan, copied: lazy rows outlive the signature `plan` points into.
  InputPlan layout = plan;
  layout.info = nullptr;
  const std::string input = plan.info->name;
  auto decode = [codec, request, geometry, map, layout, input, limits](
                    const std::filesystem::path& file,
                    std::vector<inputs::DataFile>& read) -> Result<Tensor> {
    CONVGATE_ASSIGN_OR_RETURN(std::string bytes, ReadDataFile(file, input, limits, read));
    DecodedImage image;
    if (std::string why = codec->decode(bytes, request, image); !why.empty()) {
      return Status::DataLoss(file.string() + " " + why);
    }
    return RowOf(image, geometry, map, layout);
  };
  Rows rows;
  rows.notes.push_back("input '" + input + "': " + std::to_string(files.size()) +
                       " image file(s) from " + spec.path + ", " +
                       Describe(geometry, options, map, plan));
  if (lazy) {
    rows.lazy = files.size();
    rows.decode = [files = std::move(files), decode](size_t row,
                                                     std::vector<inputs::DataFile>& read) {
      return decode(files[row], read);
    };
    return rows;
  }
  for (const std::filesystem::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(Tensor row, decode(file, rows.files));
    rows.rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace convgate::loaders
