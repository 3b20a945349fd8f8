// --data: inputs that exercise the model, read from the files a user gates with (an image folder,
// WAV clips, token ids, a CSV) instead of generated noise, which can leave a model's interesting
// paths unreached (a detector whose output map is all zeros on noise passes any conversion).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convgate/core/status.h"

namespace convgate::loaders {

enum class DataKind {
  kImage,   // JPEG, PNG, BMP (OpenCV imgcodecs): one image per batch row
  kAudio,   // WAV, PCM 16/32-bit or float: frames of the input's length
  kTokens,  // JSON or JSONL token ids: one sequence per batch row
  kText,    // text, one per line, tokenized by a Hugging Face tokenizer.json
  kTable,   // CSV: one row per batch row
};

// "image", "audio", "tokens", "text", "table".
std::string_view DataKindName(DataKind kind);

// One --data value: "KIND:NAME=PATH" feeds input NAME, "KIND:PATH" the model's only input of that
// kind. PATH is a file, a folder (its files of the kind, sorted by name, not recursive) or a glob
// ("photos/*.jpg", sorted).
struct DataSpec {
  DataKind kind = DataKind::kImage;
  std::string input;  // empty: found from the model's inputs
  std::string path;
};

// InvalidArgument quoting the text for an unknown kind or an empty path.
Result<DataSpec> ParseDataSpec(std::string_view text);

enum class ImageFit {
  kStretch,    // resized to the input's size, aspect ratio not kept
  kLetterbox,  // scaled to fit inside, aspect kept, the rest padded with grey 114 (YOLO's)
  kCrop,       // scaled to cover, aspect kept, the centre cropped (torchvision's evaluation)
};
enum class ColorOrder { kRgb, kBgr };
enum class ImageLayout { kAuto, kNchw, kNhwc };

// How image files become an input tensor: decoded, colour converted to the input's channels (1:
// grey, 3: RGB or BGR, 4: with alpha), fitted to its height and width, laid out, then for floating
// inputs scaled and normalized per channel: value = (pixel * scale - mean[c]) / std[c].
struct ImageOptions {
  int width = 0;  // --resize WxH; 0: the input's own (which must then be fixed)
  int height = 0;
  ImageFit fit = ImageFit::kStretch;
  ColorOrder color = ColorOrder::kRgb;
  ImageLayout layout = ImageLayout::kAuto;  // kAuto: from where the input's channel dim is
  std::optional<double> scale;              // --pixel-scale; unset: 1/255 for floating inputs
  std::vector<double> mean;                 // --normalize; one value or one per channel
  std::vector<double> std;
  std::string normalize_name;  // "imagenet", or empty
};

// --resize "320x320" (width x height).
Status ParseResize(std::string_view text, ImageOptions& options);
// --resize-mode "stretch", "letterbox", "crop".
Status ParseFit(std::string_view text, ImageOptions& options);
// --color-order "rgb", "bgr".
Status ParseColorOrder(std::string_view text, ImageOptions& options);
// --layout "nchw", "nhwc", "auto".
Status ParseLayout(std::string_view text, ImageOptions& options);
// --normalize "imagenet" (mean 0.485,0.456,0.406, std 0.229,0.224,0.225 after scaling by 1/255),
// "none", or "MEAN/STD" with one value or comma-separated values per channel:
// "0.5/0.5", "0.485,0.456,0.406/0.229,0.224,0.225", "127.5/127.5" (with --pixel-scale 1).
Status ParseNormalize(std::string_view text, ImageOptions& options);

// Audio: samples as floats in [-1, 1), mixed down to mono, framed to the input's length.
struct AudioOptions {
  int sample_rate = 0;  // --sample-rate: the rate the model takes; 0 accepts any file's rate
};

// Token ids: padded (with pad_id) or truncated to the input's sequence length when it is fixed.
struct TokenOptions {
  // --pad-id; unset: the tokenizer's own pad token for text ([PAD], <pad>), else 0.
  std::optional<int64_t> pad_id;
  // text: the tokenizer.json (--tokenizer); empty: the one beside the model, which the session
  // fills in (session/data_inputs.h).
  std::string tokenizer;
};

}  // namespace convgate::loaders
