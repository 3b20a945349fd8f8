// Fixtures for --data and the interface options (tests/cli/data_cli_test.cc), made from code:
//  - brightspot.onnx, a detector-like model whose heat map is 0 on uniform noise (its 8x8 window
//    means sit near 0.5, under its threshold of 0.75) and positive on bright regions of real
//    images; a conversion with a perturbed weight (brightspot_fault_weight.onnx), which passes
//    under noise and fails under images; the same model as onnx2tf would give it, NHWC in and
//    out (brightspot_nhwc.onnx), renamed as exporters do (brightspot_renamed.onnx: input.1 and
//    heat:0) and as TensorFlow names tensors (brightspot_tf.onnx: x:0, heat:0);
//  - images/: PNG, JPEG and BMP files of shapes, gradients and text drawn by OpenCV, and
//    broken/, holding one truncated JPEG and a text file named .png; bomb/huge.png, 69 bytes whose
//    header claims 100000 x 100000 pixels;
//  - clip.wav (16-bit PCM, 16 kHz, stereo), tokens.jsonl, table.csv;
//  - text/: a bag-of-embeddings classifier over token ids with an attention mask (textcls.onnx),
//    its word-level tokenizer.json, and sentences.txt.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "onnx_builder.h"

namespace {

namespace fs = std::filesystem;
using convgate::tools::AddFloatInitializer;
using convgate::tools::AddInt64Initializer;
using convgate::tools::AddNode;
using convgate::tools::SetInts;
using convgate::tools::SetType;

constexpr int kSize = 64;

struct Names {
  std::string input = "x";
  std::string output = "heat";
  bool nhwc = false;
};

// grey = mean of the channels x `gain`, averaged over 8x8 windows, minus 0.75, clipped at 0.
onnx::ModelProto BrightSpot(const Names& names, float gain) {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-data-fixtures", "brightspot");
  auto* graph = model.mutable_graph();
  if (names.nhwc) {
    SetType(graph->add_input(), names.input, onnx::TensorProto::FLOAT,
            {{1, nullptr}, {kSize, nullptr}, {kSize, nullptr}, {3, nullptr}});
    SetType(graph->add_output(), names.output, onnx::TensorProto::FLOAT,
            {{1, nullptr}, {kSize / 8, nullptr}, {kSize / 8, nullptr}, {1, nullptr}});
  } else {
    SetType(graph->add_input(), names.input, onnx::TensorProto::FLOAT,
            {{1, nullptr}, {3, nullptr}, {kSize, nullptr}, {kSize, nullptr}});
    SetType(graph->add_output(), names.output, onnx::TensorProto::FLOAT,
            {{1, nullptr}, {1, nullptr}, {kSize / 8, nullptr}, {kSize / 8, nullptr}});
  }
  std::string x = names.input;
  if (names.nhwc) {
    SetInts(AddNode(graph, "Transpose", {x}, {"x_nchw"}), "perm", {0, 3, 1, 2});
    x = "x_nchw";
  }
  AddFloatInitializer(graph, "grey.weight", {1, 3, 1, 1}, {gain / 3, gain / 3, gain / 3});
  AddNode(graph, "Conv", {x, "grey.weight"}, {"grey"});
  auto* pool = AddNode(graph, "AveragePool", {"grey"}, {"pooled"});
  SetInts(pool, "kernel_shape", {8, 8});
  SetInts(pool, "strides", {8, 8});
  AddFloatInitializer(graph, "threshold", {1}, {-0.75f});
  AddNode(graph, "Add", {"pooled", "threshold"}, {"shifted"});
  const std::string relu_out = names.nhwc ? "heat_nchw" : names.output;
  AddNode(graph, "Relu", {"shifted"}, {relu_out});
  if (names.nhwc)
    SetInts(AddNode(graph, "Transpose", {relu_out}, {names.output}), "perm", {0, 2, 3, 1});
  return model;
}

// logits[b] = sum over tokens t of mask[b, t] * embedding[ids[b, t]]: a text classifier's shape
// (ids and a mask in, scores out) in five nodes.
onnx::ModelProto TextClassifier() {
  onnx::ModelProto model = convgate::tools::NewModel("convgate-make-data-fixtures", "textcls");
  auto* graph = model.mutable_graph();
  SetType(graph->add_input(), "input_ids", onnx::TensorProto::INT64,
          {{0, "batch"}, {0, "sequence"}});
  SetType(graph->add_input(), "attention_mask", onnx::TensorProto::INT64,
          {{0, "batch"}, {0, "sequence"}});
  SetType(graph->add_output(), "logits", onnx::TensorProto::FLOAT, {{0, "batch"}, {4, nullptr}});
  std::vector<float> table;
  for (int word = 0; word < 8; ++word) {
    for (int k = 0; k < 4; ++k)
      table.push_back(0.25f * static_cast<float>((word * 5 + k * 3) % 7) - 0.5f);
  }
  AddFloatInitializer(graph, "embedding", {8, 4}, table);
  AddNode(graph, "Gather", {"embedding", "input_ids"}, {"embedded"});
  auto* cast = AddNode(graph, "Cast", {"attention_mask"}, {"mask_float"});
  convgate::tools::SetInt(cast, "to", onnx::TensorProto::FLOAT);
  AddInt64Initializer(graph, "last_axis", {1}, {2});
  AddNode(graph, "Unsqueeze", {"mask_float", "last_axis"}, {"mask3"});
  AddNode(graph, "Mul", {"embedded", "mask3"}, {"masked"});
  AddInt64Initializer(graph, "sequence_axis", {1}, {1});
  auto* sum = AddNode(graph, "ReduceSum", {"masked", "sequence_axis"}, {"logits"});
  convgate::tools::SetInt(sum, "keepdims", 0);
  return model;
}

// A word-level tokenizer.json as the `tokenizers` package writes one: lower-cased, split on
// whitespace, 8 words.
constexpr const char* kTokenizer = R"({"version": "1.0", "truncation": null, "padding": null,
 "added_tokens": [], "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
 "post_processor": null, "decoder": null,
 "model": {"type": "WordLevel", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "[PAD]": 1,
   "the": 2, "model": 3, "is": 4, "converted": 5, "correctly": 6, "not": 7}}}
)";

bool WriteModel(const fs::path& path, const onnx::ModelProto& model) {
  if (convgate::tools::WriteModel(path, model)) return true;
  std::fprintf(stderr, "convgate-make-data-fixtures: cannot write %s\n", path.c_str());
  return false;
}

// Scenes with bright regions (white shapes, a gradient, text), as a camera would not give noise.
std::vector<cv::Mat> Scenes() {
  std::vector<cv::Mat> scenes;
  cv::Mat squares(96, 128, CV_8UC3, cv::Scalar(40, 60, 80));
  cv::rectangle(squares, cv::Rect(8, 8, 48, 48), cv::Scalar(255, 255, 255), cv::FILLED);
  cv::circle(squares, cv::Point(96, 64), 20, cv::Scalar(250, 240, 230), cv::FILLED);
  scenes.push_back(squares);
  cv::Mat gradient(80, 80, CV_8UC3);
  for (int y = 0; y < gradient.rows; ++y) {
    for (int x = 0; x < gradient.cols; ++x) {
      gradient.at<cv::Vec3b>(y, x) =
          cv::Vec3b(static_cast<uint8_t>(x * 255 / 79), static_cast<uint8_t>(y * 255 / 79), 255);
    }
  }
  scenes.push_back(gradient);
  cv::Mat text(64, 160, CV_8UC3, cv::Scalar(255, 255, 255));
  cv::putText(text, "convgate", cv::Point(4, 40), cv::FONT_HERSHEY_SIMPLEX, 1.0,
              cv::Scalar(0, 0, 0), 2);
  scenes.push_back(text);
  cv::Mat grey(70, 70, CV_8UC1, cv::Scalar(230));
  cv::line(grey, cv::Point(0, 0), cv::Point(69, 69), cv::Scalar(0), 3);
  scenes.push_back(grey);
  return scenes;
}

bool WriteImages(const fs::path& dir) {
  fs::create_directories(dir / "broken");
  const std::vector<cv::Mat> scenes = Scenes();
  const char* names[] = {"a_squares.png", "b_gradient.jpg", "c_text.bmp", "d_grey.png"};
  for (size_t idx = 0; idx < scenes.size(); ++idx) {
    if (!cv::imwrite((dir / names[idx]).string(), scenes[idx])) return false;
  }
  // A JPEG cut short: its header says an image, its data ends early.
  std::vector<uint8_t> jpeg;
  cv::imencode(".jpg", scenes[0], jpeg);
  std::ofstream broken(dir / "broken" / "truncated.jpg", std::ios::binary);
  broken.write(reinterpret_cast<const char*>(jpeg.data()), 200);
  std::ofstream not_image(dir / "broken" / "notes.png", std::ios::binary);
  not_image << "these are notes, not a PNG\n";
  // IHDR 100000 x 100000 RGB, one IDAT of 100 zero bytes, IEND (CRCs included).
  static const unsigned char kHuge[] = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48,
      0x44, 0x52, 0x00, 0x01, 0x86, 0xa0, 0x00, 0x01, 0x86, 0xa0, 0x08, 0x02, 0x00, 0x00,
      0x00, 0x27, 0x30, 0x9c, 0x9f, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78,
      0x9c, 0x63, 0x60, 0xa0, 0x3d, 0x00, 0x00, 0x00, 0x64, 0x00, 0x01, 0x86, 0x64, 0x3c,
      0x35, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  fs::create_directories(dir / "bomb");
  std::ofstream huge(dir / "bomb" / "huge.png", std::ios::binary);
  huge.write(reinterpret_cast<const char*>(kHuge), sizeof(kHuge));
  return broken.good() && not_image.good() && huge.good();
}

void Le(std::ofstream& out, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.put(static_cast<char>((value >> (8 * i)) & 0xff));
}

// 0.25 s of a 440 Hz tone on the left and silence on the right, 16-bit PCM at 16 kHz.
bool WriteWav(const fs::path& path) {
  const uint32_t rate = 16000, frames = 4000, channels = 2;
  std::ofstream out(path, std::ios::binary);
  out.write("RIFF", 4);
  Le(out, 36 + frames * channels * 2, 4);
  out.write("WAVEfmt ", 8);
  Le(out, 16, 4);
  Le(out, 1, 2);
  Le(out, channels, 2);
  Le(out, rate, 4);
  Le(out, rate * channels * 2, 4);
  Le(out, channels * 2, 2);
  Le(out, 16, 2);
  out.write("data", 4);
  Le(out, frames * channels * 2, 4);
  for (uint32_t i = 0; i < frames; ++i) {
    const double tone = 0.5 * std::sin(2 * M_PI * 440.0 * i / rate);
    Le(out, static_cast<uint16_t>(static_cast<int16_t>(std::lround(tone * 32767))), 2);
    Le(out, 0, 2);
  }
  return out.good();
}

bool WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return out.good();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: convgate-make-data-fixtures OUT_DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "convgate-make-data-fixtures: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  fs::create_directories(dir / "text", ec);
  const bool ok =
      WriteModel(dir / "brightspot.onnx", BrightSpot({}, 1.0f)) &&
      WriteModel(dir / "brightspot_fault_weight.onnx", BrightSpot({}, 1.1f)) &&
      WriteModel(dir / "brightspot_nhwc.onnx", BrightSpot({.nhwc = true}, 1.0f)) &&
      WriteModel(dir / "brightspot_renamed.onnx",
                 BrightSpot({.input = "input.1", .output = "heat:0"}, 1.0f)) &&
      WriteModel(dir / "brightspot_tf.onnx",
                 BrightSpot({.input = "x:0", .output = "heat:0"}, 1.0f)) &&
      WriteImages(dir / "images") && WriteWav(dir / "clip.wav") &&
      WriteText(dir / "tokens.jsonl",
                "[101, 7592, 2088, 102]\n[101, 2023, 2003, 1037, 3231, 102]\n") &&
      WriteText(dir / "table.csv",
                "a,b,c,d\n5.1,3.5,1.4,0.2\n6.2,2.9,4.3,1.3\n7.7,3.0,6.1,2.3\n") &&
      WriteModel(dir / "text" / "textcls.onnx", TextClassifier()) &&
      WriteText(dir / "text" / "tokenizer.json", kTokenizer) &&
      WriteText(dir / "text" / "sentences.txt",
                "The model is converted\nthe model is not converted correctly\nconverted\n");
  if (!ok) std::fprintf(stderr, "convgate-make-data-fixtures: cannot write the fixtures\n");
  return ok ? 0 : 1;
}
