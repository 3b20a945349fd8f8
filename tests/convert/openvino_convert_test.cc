// The OpenVINO and optimum conversion kinds without running Python: their table entries, every
// request they refuse before anything runs, a missing venv, and the driver's handling of the IR
// (.xml + .bin) and folder outputs they write. Their exports themselves are tested end to end in
// tests/cli/openvino_cli_test.cc (label slow).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "convert/converter.h"
#include "convert/output.h"
#include "convgate/backends/openvino_ir.h"
#include "convgate/convert/convert.h"
#include "convgate/convert/kinds.h"
#include "convgate/core/file_util.h"
#include "graph/onnx_test_util.h"

namespace convgate::convert {
namespace {

namespace fs = std::filesystem;

const fs::path kTinyCnn = fs::path(CONVGATE_BINARY_DIR) / "examples" / "tinycnn.onnx";

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class OpenvinoConvertTest : public ::testing::Test {
 protected:
  ConversionRequest Request(const std::string& kind, const fs::path& source = kTinyCnn) {
    ConversionRequest request;
    request.source = source;
    request.kind = kind;
    request.output = dir_.path() / "out" / "model.xml";
    request.cache_dir = dir_.path() / "cache";
    return request;
  }

  ConversionRecord ExpectFailure(const ConversionRequest& request, ConversionError error) {
    ConversionRecord record;
    Result<ConversionRecord> converted = Convert(request, &record);
    EXPECT_FALSE(converted.ok());
    EXPECT_EQ(record.error, error)
        << ConversionErrorName(record.error) << ": " << converted.status().message();
    return record;
  }

  testing::ScopedTempDir dir_;
};

TEST_F(OpenvinoConvertTest, TheKindsAndTheirParametersAreInTheTable) {
  for (const char* spelling : {"openvino", "openvino:fp16", "optimum-openvino", "optimum-onnx"}) {
    const ConversionKind* kind = FindConversionKind(spelling);
    ASSERT_NE(kind, nullptr) << spelling;
    EXPECT_EQ(kind->spelling, spelling);
  }
  std::vector<std::string> names;
  for (const ConversionParam& param : FindConversionKind("optimum-openvino")->params) {
    names.push_back(param.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"task", "model_type", "weight_format", "group_size",
                                             "fallback"}));
  // A TorchScript source's IR inputs: names and static shapes (verify sets them from --shape).
  for (const char* spelling : {"openvino", "openvino:fp16"}) {
    names.clear();
    for (const ConversionParam& param : FindConversionKind(spelling)->params) {
      names.push_back(param.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"input_names", "input_shape", "input_dtype"}));
  }
}

// Input names and shapes are for a TorchScript source; an ONNX file declares its own.
TEST_F(OpenvinoConvertTest, InputShapesAreForATorchScriptSourceOnly) {
  ConversionRequest request = Request("openvino");
  request.params = {{"input_shape", "1x3x16x16"}};
  ConversionRecord record = ExpectFailure(request, ConversionError::kBadRequest);
  EXPECT_NE(record.error_message.find("is not TorchScript (.pt)"), std::string::npos)
      << record.error_message;
}

TEST_F(OpenvinoConvertTest, UnknownParametersAndValuesAreBadRequests) {
  ConversionRequest request = Request("optimum-onnx");
  request.params = {{"weight_format", "int4"}};  // only optimum-openvino compresses weights
  EXPECT_EQ(CheckConversionRequest(request).code(), StatusCode::kInvalidArgument);
  for (const auto& [param, value] : std::vector<std::pair<std::string, std::string>>{
           {"weight_format", "int3"}, {"fallback", "int8"}, {"group_size", "-4"}}) {
    ConversionRequest bad = Request("optimum-openvino", dir_.path());
    bad.params = {{param, value}};
    ConversionRecord record = ExpectFailure(bad, ConversionError::kBadRequest);
    EXPECT_NE(record.error_message.find(param), std::string::npos) << record.error_message;
  }
  ConversionRecord variant = ExpectFailure(Request("openvino:int4"), ConversionError::kBadRequest);
  EXPECT_NE(variant.error_message.find("openvino:fp16"), std::string::npos);
  // openvino:int8 calibrates on samples, which convert is given as a parameter.
  ConversionRecord int8 = ExpectFailure(Request("openvino:int8"), ConversionError::kBadRequest);
  EXPECT_NE(int8.error_message.find("calibration=inputs.npz"), std::string::npos)
      << int8.error_message;
}

TEST_F(OpenvinoConvertTest, SourcesOfTheWrongShapeAreBadRequests) {
  // A model file is no Hugging Face folder, and a folder without config.json neither.
  ConversionRecord file = ExpectFailure(Request("optimum-openvino"), ConversionError::kBadRequest);
  EXPECT_NE(file.error_message.find("config.json"), std::string::npos) << file.error_message;
  ExpectFailure(Request("optimum-onnx", dir_.path()), ConversionError::kBadRequest);
  // A folder that is no SavedModel is not for --to openvino.
  ConversionRecord folder =
      ExpectFailure(Request("openvino", dir_.path()), ConversionError::kBadRequest);
  EXPECT_NE(folder.error_message.find("saved_model.pb"), std::string::npos);
}

TEST_F(OpenvinoConvertTest, AMissingVenvIsAMissingConverterSayingHowToMakeIt) {
  const char* old = std::getenv("CONVGATE_VENV");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CONVGATE_VENV", (dir_.path() / "no-venv").c_str(), 1);
  // A TorchScript file goes through the venv's convert_model.
  const fs::path torchscript = dir_.path() / "model.pt";
  Write(torchscript, "a TorchScript archive");
  ConversionRecord record =
      ExpectFailure(Request("openvino", torchscript), ConversionError::kConverterMissing);
  EXPECT_NE(record.error_message.find("scripts/setup.sh"), std::string::npos)
      << record.error_message;
  EXPECT_NE(record.error_message.find("no-venv"), std::string::npos);
  // An ONNX file converts in-process when this build has OpenVINO's C++ runtime: no venv needed.
  if (backends::OpenVinoInProcess()) {
    ConversionRecord onnx;
    Result<ConversionRecord> converted = Convert(Request("openvino"), &onnx);
    EXPECT_TRUE(converted.ok()) << converted.status().ToString();
    if (converted.ok()) {
      EXPECT_EQ(converted->tool, "read_model + save_model (OpenVINO C++ runtime)");
    }
    EXPECT_TRUE(fs::exists(dir_.path() / "out" / "model.bin"));
  } else {
    ExpectFailure(Request("openvino"), ConversionError::kConverterMissing);
  }
  if (old != nullptr) {
    ::setenv("CONVGATE_VENV", saved.c_str(), 1);
  } else {
    ::unsetenv("CONVGATE_VENV");
  }
}

TEST_F(OpenvinoConvertTest, AnIrIsCheckedDigestedAndCopiedWithItsWeights) {
  const fs::path xml = dir_.path() / "work" / "model.xml";
  Write(xml, "<net/>");
  EXPECT_EQ(CheckOutput(xml, OutputLayout::kOpenvinoIr, {}).error, ConversionError::kNoOutput);
  Write(IrWeightsPath(xml), "weights");
  EXPECT_TRUE(CheckOutput(xml, OutputLayout::kOpenvinoIr, {}).ok());
  Result<std::string> digest = DigestOutput(xml);
  ASSERT_TRUE(digest.ok());
  EXPECT_NE(*digest, *Sha256File(xml));  // the .bin counts
  EXPECT_EQ(OutputBytes(xml), 13);
  const fs::path to = dir_.path() / "copy" / "net.xml";
  ASSERT_TRUE(CopyModelAtomic(xml, to).ok());
  EXPECT_EQ(Read(to), "<net/>");
  EXPECT_EQ(Read(dir_.path() / "copy" / "net.bin"), "weights");
  Write(IrWeightsPath(xml), "changed");
  EXPECT_NE(*DigestOutput(xml), *digest);
}

TEST_F(OpenvinoConvertTest, AFolderIsCheckedDigestedAndCopiedInPlaceOfAnOlderOne) {
  const fs::path folder = dir_.path() / "work" / "model";
  fs::create_directories(folder);
  EXPECT_EQ(CheckOutput(folder, OutputLayout::kFolder, {}).error, ConversionError::kNoOutput);
  EXPECT_EQ(CheckOutput(dir_.path() / "none", OutputLayout::kFolder, {}).error,
            ConversionError::kNoOutput);
  Write(folder / "openvino_model.xml", "<net/>");
  Write(folder / "sub" / "config.json", "{}");
  EXPECT_TRUE(CheckOutput(folder, OutputLayout::kFolder, {}).ok());
  EXPECT_EQ(OutputBytes(folder), 8);
  Result<std::string> digest = DigestOutput(folder);
  ASSERT_TRUE(digest.ok());
  const fs::path to = dir_.path() / "export";
  Write(to / "stale.txt", "from an older export");
  ASSERT_TRUE(CopyModelAtomic(folder, to).ok());
  EXPECT_FALSE(fs::exists(to / "stale.txt"));
  EXPECT_EQ(Read(to / "sub" / "config.json"), "{}");
  EXPECT_EQ(*DigestOutput(to), *digest);
  ASSERT_TRUE(CopyModelAtomic(folder, dir_.path() / "new" / "export").ok());  // `to` is new
  EXPECT_EQ(*DigestOutput(dir_.path() / "new" / "export"), *digest);
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_NE(entry.path().filename().string()[0], '.') << "left behind: " << entry.path();
  }
}

}  // namespace
}  // namespace convgate::convert
