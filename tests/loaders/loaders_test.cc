// The --data loaders on files written here byte by byte (a BMP, a WAV) and on the OpenCV-drawn
// fixtures of tools/make_data_fixtures.cc: values, layouts, batching, sorting, hashes, and the
// errors a user meets.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/core/temp_dir.h"
#include "convgate/loaders/load_data.h"
#include "testing/tensor_info.h"

namespace convgate::loaders {
namespace {

namespace fs = std::filesystem;
using testing::Declared;

const fs::path kFixtures = fs::path(CONVGATE_BINARY_DIR) / "examples" / "data";

void Le(std::string& out, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// A 24-bit BMP of `width` x `height`; pixel (x, y) is rgb(x, y) = {r, g, b}.
template <typename Rgb>
void WriteBmp(const fs::path& path, int width, int height, Rgb rgb) {
  const int row = (width * 3 + 3) / 4 * 4;
  std::string bytes = "BM";
  Le(bytes, 54 + row * height, 4);
  Le(bytes, 0, 4);
  Le(bytes, 54, 4);
  Le(bytes, 40, 4);
  Le(bytes, width, 4);
  Le(bytes, height, 4);
  Le(bytes, 1, 2);
  Le(bytes, 24, 2);
  Le(bytes, 0, 4);
  Le(bytes, row * height, 4);
  Le(bytes, 2835, 4);
  Le(bytes, 2835, 4);
  Le(bytes, 0, 4);
  Le(bytes, 0, 4);
  for (int y = height - 1; y >= 0; --y) {  // bottom-up
    std::string line;
    for (int x = 0; x < width; ++x) {
      const std::vector<int> p = rgb(x, y);
      line.push_back(static_cast<char>(p[2]));
      line.push_back(static_cast<char>(p[1]));
      line.push_back(static_cast<char>(p[0]));
    }
    line.resize(row, '\0');
    bytes += line;
  }
  std::ofstream(path, std::ios::binary) << bytes;
}

class LoadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TempDir> dir = TempDir::Create("loaders-test");
    ASSERT_TRUE(dir.ok()) << dir.status().ToString();
    dir_.emplace(std::move(dir).value());
  }
  fs::path Path(const std::string& name) const { return dir_->path() / name; }

  static Signature OneInput(TensorInfo info) {
    Signature signature;
    signature.inputs.push_back(std::move(info));
    return signature;
  }
  static Result<inputs::Dataset> Load(const LoaderOptions& options, const Signature& signature,
                                      inputs::InputOptions generate = {}) {
    return LoadData(options, signature, generate, Limits());
  }
  static LoaderOptions Spec(const std::string& text) {
    LoaderOptions options;
    options.specs.push_back(ParseDataSpec(text).value());
    return options;
  }

  std::optional<TempDir> dir_;
};

TEST(DataSpecTest, ParsesKindsInputsAndPaths) {
  Result<DataSpec> named = ParseDataSpec("image:x=photos/");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->kind, DataKind::kImage);
  EXPECT_EQ(named->input, "x");
  EXPECT_EQ(named->path, "photos/");
  Result<DataSpec> unnamed = ParseDataSpec("audio:clips/a=b.wav");  // '/' before '=': a path
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(unnamed->input, "");
  EXPECT_EQ(unnamed->path, "clips/a=b.wav");
  EXPECT_EQ(ParseDataSpec("tokens:input_ids=ids.jsonl")->input, "input_ids");
  const Result<DataSpec> bad = ParseDataSpec("video:x.mp4");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("image, audio, tokens, text, table"), std::string::npos);
  EXPECT_FALSE(ParseDataSpec("image:").ok());
  EXPECT_FALSE(ParseDataSpec("image:=x").ok());
}

TEST(DataSpecTest, ParsesImageOptions) {
  ImageOptions options;
  ASSERT_TRUE(ParseResize("320x240", options).ok());
  EXPECT_EQ(options.width, 320);
  EXPECT_EQ(options.height, 240);
  EXPECT_FALSE(ParseResize("320", options).ok());
  EXPECT_FALSE(ParseResize("0x3", options).ok());
  ASSERT_TRUE(ParseNormalize("0.5/0.25", options).ok());
  EXPECT_EQ(options.mean, std::vector<double>{0.5});
  EXPECT_EQ(options.std, std::vector<double>{0.25});
  EXPECT_FALSE(ParseNormalize("0.5,0.5/1", options).ok());  // two means: neither one nor three
  EXPECT_FALSE(ParseNormalize("0.5/0", options).ok());      // a zero std divides by zero
  ASSERT_TRUE(ParseNormalize("imagenet", options).ok());
  EXPECT_EQ(options.mean.size(), 3u);
  EXPECT_FALSE(ParseFit("squash", options).ok());
}

// Pixel values reach the tensor exactly: scaled by 1/255, normalized per channel, RGB in NCHW.
TEST_F(LoadersTest, ImageValuesLayoutAndNormalization) {
  WriteBmp(Path("a.bmp"), 4, 2, [](int x, int y) {
    return std::vector<int>{x * 50, y * 100, 255};
  });
  LoaderOptions options = Spec("image:" + Path("a.bmp").string());
  ASSERT_TRUE(ParseNormalize("0.5/0.25", options.image).ok());
  const Signature signature = OneInput(
      Declared("x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(3), Dim::Fixed(2), Dim::Fixed(4)}));
  Result<inputs::Dataset> dataset = Load(options, signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 1u);
  const Tensor& x = *dataset->samples[0].Find("x");
  EXPECT_EQ(x.shape().dims(), (std::vector<int64_t>{1, 3, 2, 4}));
  const auto at = [&](int c, int y, int col) { return x.GetDouble((c * 2 + y) * 4 + col); };
  EXPECT_NEAR(at(0, 1, 3), (150 / 255.0 - 0.5) / 0.25, 1e-6);  // red = x * 50
  EXPECT_NEAR(at(1, 1, 0), (100 / 255.0 - 0.5) / 0.25, 1e-6);  // green = y * 100
  EXPECT_NEAR(at(2, 0, 2), (1.0 - 0.5) / 0.25, 1e-6);          // blue = 255
  ASSERT_EQ(dataset->files.size(), 1u);
  EXPECT_EQ(dataset->files[0].input, "x");
  EXPECT_EQ(dataset->files[0].sha256, Sha256File(Path("a.bmp")).value());

  // NHWC, BGR, raw uint8 pixels.
  LoaderOptions bgr = Spec("image:" + Path("a.bmp").string());
  bgr.image.color = ColorOrder::kBgr;
  const Signature nhwc = OneInput(
      Declared("x", DType::kUInt8, {Dim::Fixed(1), Dim::Fixed(2), Dim::Fixed(4), Dim::Fixed(3)}));
  Result<inputs::Dataset> raw = Load(bgr, nhwc);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  const Tensor& pixels = *raw->samples[0].Find("x");
  EXPECT_EQ(pixels.GetDouble(((1 * 4) + 3) * 3 + 2), 150.0);  // (y 1, x 3) red is last in BGR
  EXPECT_EQ(pixels.GetDouble(0), 255.0);                      // blue first
}

TEST_F(LoadersTest, ImageFitsAndBatchesAFolderInSortedOrder) {
  fs::create_directories(Path("photos"));
  for (const char* name : {"c.bmp", "a.bmp", "b.bmp", "notes.txt"}) {
    if (std::string(name).ends_with(".txt")) {
      std::ofstream(Path("photos") / name) << "not an image";
      continue;
    }
    const int shade = name[0] == 'a' ? 10 : name[0] == 'b' ? 20 : 30;
    WriteBmp(Path("photos") / name, 20, 10, [&](int, int) {
      return std::vector<int>{shade, shade, shade};
    });
  }
  LoaderOptions options = Spec("image:x=" + Path("photos").string());
  options.image.fit = ImageFit::kLetterbox;
  // A batch of 2 at 8x8: the 20x10 images letterboxed (8x4 inside grey 114 bars); 3 files make
  // one sample, the third left unused.
  const Signature signature = OneInput(
      Declared("x", DType::kFloat32, {Dim::Fixed(2), Dim::Fixed(1), Dim::Fixed(8), Dim::Fixed(8)}));
  Result<inputs::Dataset> dataset = Load(options, signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 1u);
  ASSERT_EQ(dataset->files.size(), 3u);
  EXPECT_EQ(fs::path(dataset->files[0].path).filename(), "a.bmp");
  EXPECT_EQ(fs::path(dataset->files[2].path).filename(), "c.bmp");
  const Tensor& x = *dataset->samples[0].Find("x");
  EXPECT_EQ(x.shape().dims(), (std::vector<int64_t>{2, 1, 8, 8}));
  EXPECT_NEAR(x.GetDouble(0), 114 / 255.0, 1e-6);          // padding, top-left
  EXPECT_NEAR(x.GetDouble(4 * 8), 10 / 255.0, 1e-6);       // image a, row 4
  EXPECT_NEAR(x.GetDouble(64 + 4 * 8), 20 / 255.0, 1e-6);  // image b in the batch's 2nd row
  bool noted = false;
  for (const std::string& note : dataset->notes)
    noted = noted || note.find("left unused") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST_F(LoadersTest, ImageErrorsNameTheFileOrTheFlag) {
  const Signature fixed = OneInput(Declared(
      "x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(3), Dim::Fixed(64), Dim::Fixed(64)}));
  const Result<inputs::Dataset> broken =
      Load(Spec("image:" + (kFixtures / "images" / "broken" / "truncated.jpg").string()), fixed);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(broken.status().message().find("truncated.jpg"), std::string::npos);
  // A header claiming 10^10 pixels is refused before anything is allocated for them.
  const Result<inputs::Dataset> huge =
      Load(Spec("image:" + (kFixtures / "images" / "bomb" / "huge.png").string()), fixed);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("refused before decoding"), std::string::npos)
      << huge.status().ToString();
  Limits small;
  small.max_run_bytes = 3 * 64 * 64 * 4 * 3;  // three of the four fixture images
  const Result<inputs::Dataset> too_many =
      LoadData(Spec("image:" + (kFixtures / "images").string()), fixed, {}, small);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("--max-run-bytes"), std::string::npos)
      << too_many.status().ToString();
  const Result<inputs::Dataset> missing = Load(Spec("image:" + Path("none/").string()), fixed);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  const Signature dynamic = OneInput(
      Declared("x", DType::kFloat32,
               {Dim::Symbolic("n"), Dim::Fixed(3), Dim::Symbolic("h"), Dim::Symbolic("w")}));
  const Result<inputs::Dataset> no_size =
      Load(Spec("image:" + (kFixtures / "images").string()), dynamic);
  ASSERT_FALSE(no_size.ok());
  EXPECT_EQ(no_size.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_size.status().message().find("--resize"), std::string::npos);
  const Result<inputs::Dataset> wrong_input =
      Load(Spec("image:y=" + (kFixtures / "images").string()), fixed);
  EXPECT_EQ(wrong_input.status().code(), StatusCode::kInvalidArgument);
}

// The OpenCV-drawn fixtures: PNG, JPEG, BMP and a grey PNG, one sample each at any --resize.
TEST_F(LoadersTest, DecodesEveryFixtureFormat) {
  LoaderOptions options = Spec("image:" + (kFixtures / "images").string());
  ASSERT_TRUE(ParseResize("32x16", options.image).ok());
  options.image.fit = ImageFit::kCrop;
  const Signature dynamic = OneInput(
      Declared("x", DType::kFloat16,
               {Dim::Symbolic("n"), Dim::Fixed(3), Dim::Symbolic("h"), Dim::Symbolic("w")}));
  Result<inputs::Dataset> dataset = Load(options, dynamic);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  EXPECT_EQ(dataset->samples.size(), 4u);
  EXPECT_EQ(dataset->samples[0].Find("x")->shape().dims(), (std::vector<int64_t>{1, 3, 16, 32}));
  EXPECT_EQ(dataset->samples[0].Find("x")->dtype(), DType::kFloat16);
}

TEST_F(LoadersTest, AudioIsMixedFramedAndRateChecked) {
  const Signature signature =
      OneInput(Declared("audio", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(1000)}));
  LoaderOptions options = Spec("audio:" + (kFixtures / "clip.wav").string());
  Result<inputs::Dataset> dataset = Load(options, signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 4u);  // 4000 frames in 1000s
  const Tensor& first = *dataset->samples[0].Find("audio");
  // Left: 0.5 sin(2 pi 440 t), right silent: the mono mix is half of it.
  const double expected = 0.25 * std::sin(2 * M_PI * 440.0 * 10 / 16000);
  EXPECT_NEAR(first.GetDouble(10), expected, 1e-4);
  options.audio.sample_rate = 22050;
  const Result<inputs::Dataset> wrong = Load(options, signature);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("16000 Hz"), std::string::npos);
  EXPECT_NE(wrong.status().message().find("clip.wav"), std::string::npos);
  std::ofstream(Path("bad.wav")) << "RIFF....WAVEjunk";
  const Result<inputs::Dataset> bad = Load(Spec("audio:" + Path("bad.wav").string()), signature);
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
}

// Token ids pad to the longest sequence, and an attention mask beside them marks the tokens.
TEST_F(LoadersTest, TokensPadAndMakeTheirMask) {
  Signature signature;
  signature.inputs.push_back(
      Declared("input_ids", DType::kInt64, {Dim::Symbolic("batch"), Dim::Symbolic("seq")}));
  TensorInfo mask =
      Declared("attention_mask", DType::kInt64, {Dim::Symbolic("batch"), Dim::Symbolic("seq")});
  mask.hint.mask = true;
  signature.inputs.push_back(mask);
  Result<inputs::Dataset> dataset =
      Load(Spec("tokens:input_ids=" + (kFixtures / "tokens.jsonl").string()), signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 2u);
  const Tensor& ids = *dataset->samples[0].Find("input_ids");
  const Tensor& attention = *dataset->samples[0].Find("attention_mask");
  EXPECT_EQ(ids.shape().dims(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(ids.GetDouble(3), 102);
  EXPECT_EQ(ids.GetDouble(4), 0);
  EXPECT_EQ(attention.GetDouble(3), 1);
  EXPECT_EQ(attention.GetDouble(4), 0);
}

TEST_F(LoadersTest, TableRowsSkipTheHeader) {
  const Signature signature =
      OneInput(Declared("features", DType::kFloat32, {Dim::Symbolic("n"), Dim::Fixed(4)}));
  Result<inputs::Dataset> dataset =
      Load(Spec("table:" + (kFixtures / "table.csv").string()), signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 3u);
  EXPECT_NEAR(dataset->samples[2].Find("features")->GetDouble(2), 6.1, 1e-6);
  std::ofstream(Path("short.csv")) << "1,2,3,4\n1,2,3\n";
  const Result<inputs::Dataset> short_row =
      Load(Spec("table:" + Path("short.csv").string()), signature);
  ASSERT_FALSE(short_row.ok());
  EXPECT_NE(short_row.status().message().find("short.csv line 2"), std::string::npos);
}

// Inputs no --data feeds are generated, with the symbols they share bound to the fed sizes.
TEST_F(LoadersTest, GeneratesTheInputsDataDoesNotFeed) {
  Signature signature;
  signature.inputs.push_back(
      Declared("features", DType::kFloat32, {Dim::Symbolic("n"), Dim::Fixed(4)}));
  signature.inputs.push_back(
      Declared("scale", DType::kFloat32, {Dim::Symbolic("n"), Dim::Fixed(1)}));
  Result<inputs::Dataset> dataset =
      Load(Spec("table:features=" + (kFixtures / "table.csv").string()), signature);
  ASSERT_TRUE(dataset.ok()) << dataset.status().ToString();
  ASSERT_EQ(dataset->samples.size(), 3u);
  ASSERT_NE(dataset->samples[1].Find("scale"), nullptr);
  EXPECT_EQ(dataset->samples[1].Find("scale")->shape().dims(), (std::vector<int64_t>{1, 1}));
}

// Every sample as a streamed dataset makes it, asked in any order and more than once.
std::vector<TensorMap> Every(inputs::Dataset& dataset, std::vector<inputs::DataFile>& files) {
  std::vector<TensorMap> samples;
  for (size_t idx = 0; idx < dataset.size(); ++idx) {
    if (idx < dataset.samples.size()) {
      samples.push_back(dataset.samples[idx].Clone());
      continue;
    }
    Result<TensorMap> made = dataset.make(idx, files);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    samples.push_back(made.ok() ? std::move(made).value() : TensorMap());
  }
  return samples;
}

void ExpectSameSamples(const std::vector<TensorMap>& held, const std::vector<TensorMap>& streamed) {
  ASSERT_EQ(held.size(), streamed.size());
  for (size_t idx = 0; idx < held.size(); ++idx) {
    ASSERT_EQ(held[idx].Names(), streamed[idx].Names()) << "sample " << idx;
    for (const auto& entry : held[idx]) {
      const Tensor& other = *streamed[idx].Find(entry.name);
      ASSERT_EQ(entry.tensor.shape(), other.shape()) << "sample " << idx << " " << entry.name;
      const std::span<const std::byte> a = entry.tensor.bytes();
      const std::span<const std::byte> b = other.bytes();
      EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end()))
          << "sample " << idx << " input " << entry.name;
    }
  }
}

// A streamed dataset holds one sample and makes the rest when asked, each as the held dataset
// has it: images decoded again (recorded when read), generated inputs drawn again, masks marked.
TEST_F(LoadersTest, StreamedSamplesAreTheHeldOnes) {
  const Signature images = OneInput(Declared(
      "x", DType::kFloat32, {Dim::Fixed(1), Dim::Fixed(3), Dim::Fixed(32), Dim::Fixed(32)}));
  const LoaderOptions folder = Spec("image:" + (kFixtures / "images").string());
  Result<inputs::Dataset> held = LoadData(folder, images, {}, Limits());
  Result<inputs::Dataset> streamed = LoadData(folder, images, {}, Limits(), /*stream=*/true);
  ASSERT_TRUE(held.ok() && streamed.ok()) << streamed.status().ToString();
  EXPECT_FALSE(held->is_streamed());
  ASSERT_TRUE(streamed->is_streamed());
  EXPECT_EQ(streamed->samples.size(), 1u);
  EXPECT_EQ(streamed->size(), held->size());
  EXPECT_EQ(streamed->files.size(), 1u);  // only the first image was read
  std::vector<inputs::DataFile> read;
  ExpectSameSamples(held->samples, Every(*streamed, read));
  EXPECT_EQ(read.size(), held->files.size() - 1);
  // Made twice (run ahead, then for the target): the same again.
  read.clear();
  ExpectSameSamples(held->samples, Every(*streamed, read));

  // A folder that does not fit in --max-run-bytes streams: only one sample is ever held.
  Limits small;
  small.max_run_bytes = 3 * 32 * 32 * 4 * 2;
  EXPECT_FALSE(LoadData(folder, images, {}, small).ok());
  EXPECT_TRUE(LoadData(folder, images, {}, small, /*stream=*/true).ok());

  // Tokens with their mask, and a generated input beside a CSV.
  Signature tokens;
  tokens.inputs.push_back(
      Declared("input_ids", DType::kInt64, {Dim::Fixed(1), Dim::Symbolic("sequence")}));
  TensorInfo mask =
      Declared("attention_mask", DType::kInt64, {Dim::Fixed(1), Dim::Symbolic("sequence")});
  mask.hint.mask = true;
  tokens.inputs.push_back(mask);
  const LoaderOptions ids = Spec("tokens:input_ids=" + (kFixtures / "tokens.jsonl").string());
  Result<inputs::Dataset> ids_held = LoadData(ids, tokens, {}, Limits());
  Result<inputs::Dataset> ids_streamed = LoadData(ids, tokens, {}, Limits(), true);
  ASSERT_TRUE(ids_held.ok() && ids_streamed.ok()) << ids_streamed.status().ToString();
  ExpectSameSamples(ids_held->samples, Every(*ids_streamed, read));

  Signature table;
  table.inputs.push_back(
      Declared("features", DType::kFloat32, {Dim::Symbolic("n"), Dim::Fixed(4)}));
  table.inputs.push_back(Declared("scale", DType::kFloat32, {Dim::Symbolic("n"), Dim::Fixed(1)}));
  const LoaderOptions csv = Spec("table:features=" + (kFixtures / "table.csv").string());
  Result<inputs::Dataset> rows_held = LoadData(csv, table, {}, Limits());
  Result<inputs::Dataset> rows_streamed = LoadData(csv, table, {}, Limits(), true);
  ASSERT_TRUE(rows_held.ok() && rows_streamed.ok()) << rows_streamed.status().ToString();
  ExpectSameSamples(rows_held->samples, Every(*rows_streamed, read));
}

}  // namespace
}  // namespace convgate::loaders
