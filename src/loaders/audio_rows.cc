// --data audio: WAV files (PCM 8/16/24/32-bit or IEEE float), mixed to mono and cut into frames
// of the input's length. Nothing is resampled: a file at another rate than --sample-rate is
// refused, since a resampler's choices would be one more difference between the two sides' data.
#include <cstring>

#include "loaders/rows.h"

namespace convgate::loaders {
namespace {

struct Wav {
  int format = 0;  // 1: PCM, 3: IEEE float
  int channels = 0;
  int sample_rate = 0;
  int bits = 0;
  std::string_view data;
};

uint32_t Le32(std::string_view bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  return value;
}
uint16_t Le16(std::string_view bytes, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(bytes[at]) |
                               (static_cast<uint8_t>(bytes[at + 1]) << 8));
}

Result<Wav> ParseWav(std::string_view bytes, const std::string& path) {
  const auto bad = [&](const std::string& why) {
    return Status::DataLoss(path + " is not a readable WAV file: " + why);
  };
  if (bytes.size() < 12 || bytes.substr(0, 4) != "RIFF" || bytes.substr(8, 4) != "WAVE") {
    return bad("no RIFF/WAVE header");
  }
  Wav wav;
  bool have_format = false;
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const std::string_view id = bytes.substr(at, 4);
    const uint64_t size = Le32(bytes, at + 4);
    const size_t body = at + 8;
    if (size > bytes.size() - body) {
      if (id != "data") return bad("chunk '" + std::string(id) + "' runs past the end");
      wav.data = bytes.substr(body);  // a stream's writer may leave the size unset
      break;
    }
    if (id == "fmt ") {
      if (size < 16) return bad("its fmt chunk is " + std::to_string(size) + " bytes");
      wav.format = Le16(bytes, body);
      wav.channels = Le16(bytes, body + 2);
      wav.sample_rate = static_cast<int>(Le32(bytes, body + 4));
      wav.bits = Le16(bytes, body + 14);
      if (wav.format == 0xFFFE && size >= 26) wav.format = Le16(bytes, body + 24);  // extensible
      have_format = true;
    } else if (id == "data") {
      wav.data = bytes.substr(body, size);
      break;
    }
    at = body + size + (size & 1);
  }
  if (!have_format) return bad("no fmt chunk");
  if (wav.data.data() == nullptr) return bad("no data chunk");
  const bool pcm =
      wav.format == 1 && (wav.bits == 8 || wav.bits == 16 || wav.bits == 24 || wav.bits == 32);
  const bool floating = wav.format == 3 && (wav.bits == 32 || wav.bits == 64);
  if (!pcm && !floating) {
    return bad("format " + std::to_string(wav.format) + " with " + std::to_string(wav.bits) +
               "-bit samples; PCM 8/16/24/32-bit and float 32/64-bit are read");
  }
  if (wav.channels < 1) return bad("0 channels");
  return wav;
}

double SampleAt(const Wav& wav, size_t frame, int channel) {
  const size_t width = static_cast<size_t>(wav.bits / 8);
  const char* at = wav.data.data() + (frame * wav.channels + channel) * width;
  if (wav.format == 3) {
    if (wav.bits == 32) {
      float value;
      std::memcpy(&value, at, 4);
      return value;
    }
    double value;
    std::memcpy(&value, at, 8);
    return value;
  }
  switch (wav.bits) {
    case 8:
      return (static_cast<uint8_t>(at[0]) - 128) / 128.0;
    case 16:
      return static_cast<int16_t>(Le16(std::string_view(at, 2), 0)) / 32768.0;
    case 24: {
      int32_t value = static_cast<uint8_t>(at[0]) | (static_cast<uint8_t>(at[1]) << 8) |
                      (static_cast<int8_t>(at[2]) * 65536);
      return value / 8388608.0;
    }
    default:
      return static_cast<int32_t>(Le32(std::string_view(at, 4), 0)) / 2147483648.0;
  }
}

// The axis holding the samples: the last one not of size 1; every other non-batch axis is 1.
Result<size_t> LengthAxis(const InputPlan& plan) {
  const size_t first = plan.batched ? 1 : 0;
  size_t axis = plan.shape.size() - 1;
  for (size_t a = plan.shape.size(); a-- > first;) {
    if (!plan.fixed[a] || plan.shape[a] != 1) {
      axis = a;
      break;
    }
  }
  for (size_t a = first; a < plan.shape.size(); ++a) {
    if (a != axis && plan.shape[a] != 1) {
      return Status::InvalidArgument("--data audio: input '" + plan.info->name +
                                     "' has more than one axis besides its batch that is not 1; "
                                     "audio fills [batch, samples] or [batch, 1, samples]");
    }
  }
  if (plan.shape.size() <= first) {
    return Status::InvalidArgument("--data audio: input '" + plan.info->name + "' is a scalar");
  }
  return axis;
}

}  // namespace

Result<Rows> LoadAudioRows(const DataSpec& spec, const InputPlan& plan, const AudioOptions& options,
                           const Limits& limits) {
  CONVGATE_RETURN_IF_ERROR(CheckNumericInput(plan, "audio"));
  if (!IsFloating(plan.dtype)) {
    return Status::InvalidArgument("--data audio: input '" + plan.info->name + "' is " +
                                   std::string(DTypeName(plan.dtype)) +
                                   "; audio fills floating-point inputs");
  }
  CONVGATE_ASSIGN_OR_RETURN(size_t axis, LengthAxis(plan));
  CONVGATE_ASSIGN_OR_RETURN(std::vector<std::filesystem::path> files,
                            ListDataFiles(spec.path, {".wav"}, "WAV"));
  const bool fixed_length = plan.fixed[axis];
  Rows rows;
  int padded = 0;
  for (const std::filesystem::path& file : files) {
    CONVGATE_ASSIGN_OR_RETURN(std::string bytes,
                              ReadDataFile(file, plan.info->name, limits, rows.files));
    CONVGATE_ASSIGN_OR_RETURN(Wav wav, ParseWav(bytes, file.string()));
    if (options.sample_rate > 0 && wav.sample_rate != options.sample_rate) {
      return Status::FailedPrecondition(
          file.string() + " is sampled at " + std::to_string(wav.sample_rate) +
          " Hz; the model takes " + std::to_string(options.sample_rate) +
          " Hz (--sample-rate): resample it first, e.g. sox in.wav -r " +
          std::to_string(options.sample_rate) + " out.wav");
    }
    const size_t frames = wav.data.size() / (static_cast<size_t>(wav.bits / 8) * wav.channels);
    if (frames == 0) return Status::DataLoss(file.string() + " holds no audio samples");
    const size_t length = fixed_length ? static_cast<size_t>(plan.shape[axis]) : frames;
    for (size_t start = 0; start < frames; start += length) {
      std::vector<int64_t> dims = plan.shape;
      if (plan.batched) dims[0] = 1;
      dims[axis] = static_cast<int64_t>(length);
      CONVGATE_ASSIGN_OR_RETURN(Shape shape, Shape::Make(dims));
      CONVGATE_ASSIGN_OR_RETURN(Tensor row, Tensor::Allocate(plan.dtype, shape));
      for (size_t i = 0; i < length && start + i < frames; ++i) {
        double mixed = 0;
        for (int c = 0; c < wav.channels; ++c) mixed += SampleAt(wav, start + i, c);
        row.SetDouble(static_cast<int64_t>(i), mixed / wav.channels);
      }
      if (start + length > frames) ++padded;
      rows.rows.push_back(std::move(row));
    }
  }
  std::string note =
      "input '" + plan.info->name + "': " + std::to_string(files.size()) + " WAV file(s) from " +
      spec.path + ", mixed to mono, " + std::to_string(rows.rows.size()) + " frame(s) of " +
      (fixed_length ? std::to_string(plan.shape[axis]) + " samples" : std::string("a whole clip"));
  if (padded > 0) note += ", " + std::to_string(padded) + " padded with zeros at the end";
  if (options.sample_rate == 0) note += "; no --sample-rate given, so file rates are not checked";
  rows.notes.push_back(note);
  return rows;
}

}  // namespace convgate::loaders
