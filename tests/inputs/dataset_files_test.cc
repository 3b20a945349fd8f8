// LoadDataset / SaveDataset: round trips through every layout, numpy-written files, error paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "convgate/inputs/dataset.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/safetensors.h"
#include "convgate/io/test_case.h"
#include "inputs/test_util.h"

namespace convgate::inputs {
namespace {

namespace fs = std::filesystem;
using test_util::Fix;
using test_util::Input;
using test_util::MakeSignature;
using test_util::Sym;
using ::testing::HasSubstr;

Signature TwoInputs() {
  return MakeSignature({
      Input("x", DType::kFloat32, {Sym("batch"), Fix(3)}),
      Input("ids", DType::kInt64, {Sym("batch")}),
  });
}

Dataset Generated(const Signature& signature, int samples) {
  InputOptions options;
  options.samples = samples;
  options.dim_per_symbol["batch"] = 2;
  Result<Dataset> dataset = GenerateDataset(signature, options);
  if (!dataset.ok()) ADD_FAILURE() << dataset.status().ToString();
  return dataset.ok() ? std::move(dataset).value() : Dataset();
}

void ExpectSameSamples(const Dataset& actual, const Dataset& expected) {
  ASSERT_EQ(actual.samples.size(), expected.samples.size());
  for (size_t sample_idx = 0; sample_idx < expected.samples.size(); ++sample_idx) {
    const TensorMap& want = expected.samples[sample_idx];
    const TensorMap& got = actual.samples[sample_idx];
    EXPECT_EQ(got.Names(), want.Names()) << "sample " << sample_idx;
    for (const TensorMap::Entry& entry : want) {
      const Tensor* tensor = got.Find(entry.name);
      ASSERT_NE(tensor, nullptr) << entry.name;
      EXPECT_TRUE(tensor->BitwiseEquals(entry.tensor)) << entry.name << " sample " << sample_idx;
    }
  }
}

class DatasetFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("convgate_inputs_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void WriteText(const fs::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  fs::path dir_;
};

TEST_F(DatasetFilesTest, FlatNpzRoundTrip) {
  const Dataset dataset = Generated(TwoInputs(), 1);
  const fs::path path = dir_ / "inputs.npz";
  ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
  Result<TensorMap> members = io::ReadNpz(path);
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  EXPECT_EQ(members->Names(), (std::vector<std::string>{"x", "ids"}));
  Result<Dataset> loaded = LoadDataset(path, TwoInputs());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->origin, path.string());
  ExpectSameSamples(*loaded, dataset);
  EXPECT_TRUE(ValidateDataset(*loaded, TwoInputs()).ok());
}

TEST_F(DatasetFilesTest, MultiSampleNpzRoundTrip) {
  const Dataset dataset = Generated(TwoInputs(), 3);
  const fs::path path = dir_ / "inputs.npz";
  ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
  Result<TensorMap> members = io::ReadNpz(path);
  ASSERT_TRUE(members.ok());
  EXPECT_EQ(members->size(), 6u);
  EXPECT_TRUE(members->Contains("sample_2/ids"));
  Result<Dataset> loaded = LoadDataset(path, TwoInputs());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSameSamples(*loaded, dataset);
}

// A streamed data set is saved one sample at a time: the file it gives is the one SaveDataset
// writes, and until Finish an .npz at the path is left as it was.
TEST_F(DatasetFilesTest, AWriterSavesOneSampleAtATime) {
  const Dataset dataset = Generated(TwoInputs(), 3);
  for (const std::string name : {"inputs.npz", "case"}) {
    const fs::path path = dir_ / name;
    const fs::path whole = dir_ / ("whole_" + name);
    ASSERT_TRUE(SaveDataset(whole, dataset, TwoInputs()).ok());
    if (name == "inputs.npz") WriteText(path, "the previous file");
    Result<DatasetWriter> writer = DatasetWriter::ForInputs(path, 3, TwoInputs());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (const TensorMap& sample : dataset.samples) ASSERT_TRUE(writer->Add(sample).ok());
    if (name == "inputs.npz") {
      std::ifstream in(path);
      EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "the previous file");
    }
    ASSERT_TRUE(writer->Finish().ok());
    Result<Dataset> loaded = LoadDataset(path, TwoInputs());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExpectSameSamples(*loaded, dataset);
    if (name == "inputs.npz") {
      std::ifstream a(path, std::ios::binary), b(whole, std::ios::binary);
      EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}),
                std::string(std::istreambuf_iterator<char>(b), {}))
          << "the streamed archive differs from SaveDataset's";
    }
  }
  // Fewer samples than announced is not a finished file.
  Result<DatasetWriter> short_writer = DatasetWriter::ForInputs(dir_ / "short.npz", 3, TwoInputs());
  ASSERT_TRUE(short_writer.ok());
  ASSERT_TRUE(short_writer->Add(dataset.samples[0]).ok());
  const Status unfinished = short_writer->Finish();
  EXPECT_EQ(unfinished.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(unfinished.message(), HasSubstr("was to hold 3 samples and was given 1"));
  EXPECT_FALSE(fs::exists(dir_ / "short.npz"));
}

TEST_F(DatasetFilesTest, SafetensorsRoundTripsOneSampleAndMany) {
  for (const int samples : {1, 3}) {
    const Dataset dataset = Generated(TwoInputs(), samples);
    const fs::path path = dir_ / ("inputs_" + std::to_string(samples) + ".safetensors");
    ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
    Result<io::SafetensorsFile> file = io::ReadSafetensors(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(file->tensors.size(), 2u * samples);
    if (samples > 1) {
      EXPECT_TRUE(file->tensors.Contains("sample_2/ids"));
    }
    Result<Dataset> loaded = LoadDataset(path, TwoInputs());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(loaded->origin, path.string());
    ExpectSameSamples(*loaded, dataset);
  }
}

TEST_F(DatasetFilesTest, SafetensorsKeepHalfAndBfloat16Bits) {
  TensorMap sample;
  // 0x3c00 = 1.0 in fp16 and 0x3f80 = 1.0 in bf16; 0x7e00 / 0x7fc0 a NaN of each.
  sample.InsertOrAssign(
      "h", Tensor::FromVector<uint16_t>(DType::kFloat16, Shape::Of({2}), {0x3c00, 0x7e00}));
  sample.InsertOrAssign(
      "b", Tensor::FromVector<uint16_t>(DType::kBFloat16, Shape::Of({2}), {0x3f80, 0x7fc0}));
  Dataset dataset;
  dataset.samples.push_back(std::move(sample));
  const fs::path path = dir_ / "outputs.safetensors";
  ASSERT_TRUE(SaveOutputs(path, dataset, {}).ok());
  Result<Dataset> loaded = LoadDataset(path, Signature());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSameSamples(*loaded, dataset);
  EXPECT_EQ(loaded->samples[0].Find("b")->dtype(), DType::kBFloat16);
}

TEST_F(DatasetFilesTest, SafetensorsErrorsNameTheFileAndTheTensor) {
  const Dataset dataset = Generated(TwoInputs(), 1);
  const fs::path path = dir_ / "inputs.safetensors";
  ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
  fs::resize_file(path, fs::file_size(path) - 3);  // the last tensor's buffer cut short
  Result<Dataset> truncated = LoadDataset(path, TwoInputs());
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(truncated.status().message(), HasSubstr(path.string()));
  EXPECT_THAT(truncated.status().message(), HasSubstr("'ids'"));

  TensorMap strings;
  strings.InsertOrAssign("s", std::move(Tensor::FromStrings(Shape::Of({1}), {"text"})).value());
  Dataset with_strings;
  with_strings.samples.push_back(std::move(strings));
  const Status refused = SaveOutputs(dir_ / "s.safetensors", with_strings, {});
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("s.safetensors"));
  EXPECT_FALSE(fs::exists(dir_ / "s.safetensors"));
}

TEST_F(DatasetFilesTest, OneSampleWhoseNamesLookLikeSampleKeysRoundTrips) {
  TensorMap sample;
  sample.InsertOrAssign("sample_0/x",
                        Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1.5f}));
  Dataset dataset;
  dataset.samples.push_back(std::move(sample));
  const fs::path path = dir_ / "odd.npz";
  ASSERT_TRUE(SaveDataset(path, dataset, Signature()).ok());
  Result<Dataset> loaded = LoadDataset(path, Signature());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSameSamples(*loaded, dataset);
}

TEST_F(DatasetFilesTest, TestCaseFolderRoundTrip) {
  const Dataset dataset = Generated(TwoInputs(), 2);
  const fs::path path = dir_ / "case";
  ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
  EXPECT_TRUE(fs::exists(path / "test_data_set_1" / "input_1.pb"));
  Result<Dataset> loaded = LoadDataset(path, TwoInputs());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSameSamples(*loaded, dataset);

  Result<Dataset> second = LoadDataset(path / "test_data_set_1", TwoInputs());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->samples.size(), 1u);
  EXPECT_TRUE(second->samples[0].Find("x")->BitwiseEquals(*dataset.samples[1].Find("x")));
}

TEST_F(DatasetFilesTest, TestCaseFilesFollowTheSignatureOrder) {
  Dataset dataset;
  TensorMap sample;
  sample.InsertOrAssign("ids", Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({1}), {7}));
  sample.InsertOrAssign(
      "x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 3}), {1.0f, 2.0f, 3.0f}));
  dataset.samples.push_back(std::move(sample));
  const fs::path path = dir_ / "case";
  ASSERT_TRUE(SaveDataset(path, dataset, TwoInputs()).ok());
  // Loading without names falls back to the TensorProto names, which show the order on disk.
  Result<Dataset> loaded = LoadDataset(path, Signature());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->samples[0].Names(), (std::vector<std::string>{"x", "ids"}));

  Dataset missing;
  missing.samples.push_back(TensorMap());
  missing.samples[0].InsertOrAssign(
      "x", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1, 3}), {1.0f, 2.0f, 3.0f}));
  Status status = SaveDataset(dir_ / "case2", missing, TwoInputs());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("it has no input 'ids'"));
}

// The --save-inputs/--save-outputs data loss of issue 9: outputs saved to a test case folder went
// to input_K.pb, over the inputs.
TEST_F(DatasetFilesTest, OutputsAreSavedBesideTheInputsOfATestCase) {
  const Dataset inputs = Generated(TwoInputs(), 2);
  Dataset outputs;
  for (float value : {1.0f, 2.0f}) {
    TensorMap sample;
    sample.InsertOrAssign("probs",
                          Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {value}));
    sample.InsertOrAssign("logits",
                          Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {-value}));
    outputs.samples.push_back(std::move(sample));
  }
  const std::vector<TensorInfo> declared = {{"logits", DType::kFloat32, "float32", false, {}, {}},
                                            {"probs", DType::kFloat32, "float32", false, {}, {}}};
  const fs::path path = dir_ / "case";
  ASSERT_TRUE(SaveDataset(path, inputs, TwoInputs()).ok());
  ASSERT_TRUE(SaveOutputs(path, outputs, declared).ok());
  // Saving the inputs again (the same command run twice) keeps the outputs too.
  ASSERT_TRUE(SaveDataset(path, inputs, TwoInputs()).ok());
  Result<std::vector<io::TestDataSet>> sets = io::ReadTestCase(path, {});
  ASSERT_TRUE(sets.ok()) << sets.status().ToString();
  ASSERT_EQ(sets->size(), 2u);
  EXPECT_EQ((*sets)[1].inputs.Names(), (std::vector<std::string>{"x", "ids"}));
  // output_K.pb follow the declared order, not the order the runtime returned them in.
  EXPECT_EQ((*sets)[1].outputs.Names(), (std::vector<std::string>{"logits", "probs"}));
  EXPECT_EQ((*sets)[1].outputs.Find("probs")->data<float>()[0], 2.0f);
  Result<Dataset> loaded = LoadDataset(path, TwoInputs());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExpectSameSamples(*loaded, inputs);

  Status npy = SaveOutputs(dir_ / "y.npy", outputs, declared);
  EXPECT_EQ(npy.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(npy.message(), HasSubstr("cannot save outputs as"));
  const std::vector<TensorInfo> other = {{"boxes", DType::kFloat32, "float32", false, {}, {}}};
  Status missing = SaveOutputs(dir_ / "case2", outputs, other);
  EXPECT_THAT(missing.message(), HasSubstr("it has no output 'boxes', and output_K.pb files"));
}

TEST_F(DatasetFilesTest, StaleDataSetsAreNotLeftBehind) {
  const fs::path path = dir_ / "case";
  ASSERT_TRUE(SaveDataset(path, Generated(TwoInputs(), 3), TwoInputs()).ok());
  ASSERT_TRUE(SaveDataset(path, Generated(TwoInputs(), 3), TwoInputs()).ok());  // overwrite: fine
  Status status = SaveDataset(path, Generated(TwoInputs(), 2), TwoInputs());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("test_data_set_2"));
  EXPECT_THAT(status.message(), HasSubstr(path.string()));
}

TEST_F(DatasetFilesTest, SingleNpyIsOneSampleOfASingleInputModel) {
  const fs::path path = dir_ / "x.npy";
  const Tensor tensor = Tensor::FromVector<float>(DType::kFloat32, Shape::Of({2}), {1.0f, 2.0f});
  ASSERT_TRUE(io::WriteNpy(path, tensor).ok());
  const Signature one = MakeSignature({Input("pixel_values", DType::kFloat32, {Fix(2)})});
  Result<Dataset> loaded = LoadDataset(path, one);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->samples.size(), 1u);
  ASSERT_NE(loaded->samples[0].Find("pixel_values"), nullptr);
  EXPECT_TRUE(loaded->samples[0].Find("pixel_values")->BitwiseEquals(tensor));

  const Signature three =
      MakeSignature({Input("a", DType::kFloat32, {}), Input("b", DType::kFloat32, {}),
                     Input("c", DType::kFloat32, {})});
  Result<Dataset> wrong = LoadDataset(path, three);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(),
            path.string() + " holds one tensor but the model has 3 inputs; use an .npz");
}

TEST_F(DatasetFilesTest, FolderOfNpyFiles) {
  const fs::path folder = dir_ / "tensors";
  fs::create_directories(folder);
  ASSERT_TRUE(io::WriteNpy(folder / "x.npy",
                           Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {3.0f}))
                  .ok());
  ASSERT_TRUE(io::WriteNpy(folder / "input:0.npy",
                           Tensor::FromVector<int64_t>(DType::kInt64, Shape::Of({1}), {4}))
                  .ok());
  WriteText(folder / "README.txt", "not a tensor");
  Result<Dataset> loaded = LoadDataset(folder, Signature());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->samples.size(), 1u);
  EXPECT_EQ(loaded->samples[0].Names(), (std::vector<std::string>{"input:0", "x"}));

  fs::create_directories(dir_ / "empty");
  Result<Dataset> empty = LoadDataset(dir_ / "empty", Signature());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr((dir_ / "empty").string()));
}

TEST_F(DatasetFilesTest, SampleNumbersMustBeContiguous) {
  TensorMap members;
  members.InsertOrAssign("sample_0/x",
                         Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1.0f}));
  members.InsertOrAssign("sample_2/x",
                         Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {2.0f}));
  const fs::path path = dir_ / "gap.npz";
  ASSERT_TRUE(io::WriteNpz(path, members).ok());
  Result<Dataset> loaded = LoadDataset(path, Signature());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(loaded.status().message(),
            path.string() +
                ": has no sample_1/ members but has sample_2/ (samples must be "
                "numbered from 0 without gaps)");
}

TEST_F(DatasetFilesTest, MixedMemberNamesMeanAFlatNpz) {
  TensorMap members;
  members.InsertOrAssign("sample_0/x",
                         Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {1.0f}));
  members.InsertOrAssign("y", Tensor::FromVector<float>(DType::kFloat32, Shape::Of({1}), {2.0f}));
  const fs::path path = dir_ / "mixed.npz";
  ASSERT_TRUE(io::WriteNpz(path, members).ok());
  Result<Dataset> loaded = LoadDataset(path, Signature());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->samples.size(), 1u);
  EXPECT_EQ(loaded->samples[0].Names(), (std::vector<std::string>{"sample_0/x", "y"}));
}

TEST_F(DatasetFilesTest, LoadErrorsNameTheFile) {
  Result<Dataset> missing = LoadDataset(dir_ / "nope.npz", Signature());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr((dir_ / "nope.npz").string()));

  WriteText(dir_ / "corrupt.npz", "this is not a zip archive");
  Result<Dataset> corrupt = LoadDataset(dir_ / "corrupt.npz", Signature());
  EXPECT_EQ(corrupt.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(corrupt.status().message(), HasSubstr("corrupt.npz"));

  WriteText(dir_ / "corrupt.npy", "\x93NUMPY\x01\x00\x10");  // header cut short
  const Signature one = MakeSignature({Input("x", DType::kFloat32, {})});
  Result<Dataset> bad_npy = LoadDataset(dir_ / "corrupt.npy", one);
  EXPECT_EQ(bad_npy.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(bad_npy.status().message(), HasSubstr("corrupt.npy"));

  WriteText(dir_ / "inputs.json", "{}");
  Result<Dataset> json = LoadDataset(dir_ / "inputs.json", Signature());
  EXPECT_EQ(json.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(json.status().message(), HasSubstr("inputs.json"));
}

TEST_F(DatasetFilesTest, SaveErrors) {
  Status npy = SaveDataset(dir_ / "x.npy", Generated(TwoInputs(), 1), TwoInputs());
  EXPECT_EQ(npy.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(npy.message(), HasSubstr("x.npy"));
  Status empty = SaveDataset(dir_ / "x.npz", Dataset(), TwoInputs());
  EXPECT_EQ(empty.code(), StatusCode::kFailedPrecondition);
  WriteText(dir_ / "file", "");
  Status not_a_folder = SaveDataset(dir_ / "file", Generated(TwoInputs(), 1), TwoInputs());
  EXPECT_FALSE(not_a_folder.ok());
  EXPECT_THAT(not_a_folder.message(), HasSubstr((dir_ / "file").string()));
}

// Debian's python3 has numpy; the pyenv python that may come first on PATH does not.
constexpr const char* kPython = "/usr/bin/python3";

bool HaveNumpy() {
  return std::system((std::string(kPython) + " -c 'import numpy' 2>/dev/null").c_str()) == 0;
}

// numpy is the format's reference implementation: files it writes must load unchanged.
TEST_F(DatasetFilesTest, LoadsNumpyWrittenNpz) {
  if (!HaveNumpy()) GTEST_SKIP() << kPython << " with numpy is not available";
  const fs::path script = dir_ / "make.py";
  WriteText(script,
            "import sys, numpy as np\n"
            "d = sys.argv[1]\n"
            "x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4\n"
            "ids = np.array([5, -7], dtype=np.int64)\n"
            "np.savez(d + '/flat.npz', x=x, ids=ids)\n"
            "np.savez_compressed(d + '/multi.npz', **{'sample_0/x': x, 'sample_0/ids': ids,\n"
            "                    'sample_1/x': x + 1, 'sample_1/ids': ids * 2})\n");
  const std::string command = std::string(kPython) + " " + script.string() + " " + dir_.string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  Result<Dataset> flat = LoadDataset(dir_ / "flat.npz", TwoInputs());
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ASSERT_TRUE(ValidateDataset(*flat, TwoInputs()).ok());
  EXPECT_EQ(flat->samples[0].Find("x")->GetDouble(5), 1.25);
  EXPECT_EQ(flat->samples[0].Find("ids")->data<int64_t>()[1], -7);

  Result<Dataset> multi = LoadDataset(dir_ / "multi.npz", TwoInputs());
  ASSERT_TRUE(multi.ok()) << multi.status().ToString();
  ASSERT_EQ(multi->samples.size(), 2u);
  ASSERT_TRUE(ValidateDataset(*multi, TwoInputs()).ok());
  EXPECT_EQ(multi->samples[1].Find("x")->GetDouble(0), 1.0);
  EXPECT_EQ(multi->samples[1].Find("ids")->data<int64_t>()[0], 10);
}

// And numpy must read what SaveDataset writes, sample keys included.
TEST_F(DatasetFilesTest, NumpyReadsSavedMultiSampleNpz) {
  if (!HaveNumpy()) GTEST_SKIP() << kPython << " with numpy is not available";
  const Dataset dataset = Generated(TwoInputs(), 2);
  ASSERT_TRUE(SaveDataset(dir_ / "saved.npz", dataset, TwoInputs()).ok());
  const Tensor& x = *dataset.samples[1].Find("x");
  const fs::path script = dir_ / "check.py";
  WriteText(script,
            "import sys, numpy as np\n"
            "z = np.load(sys.argv[1])\n"
            "assert sorted(z.files) == ['sample_0/ids', 'sample_0/x', 'sample_1/ids', "
            "'sample_1/x'], z.files\n"
            "x = z['sample_1/x']\n"
            "assert x.dtype == np.float32 and x.shape == (2, 3), (x.dtype, x.shape)\n"
            "assert x[1, 2] == np.float32(sys.argv[2]), (x[1, 2], sys.argv[2])\n");
  char expected[64];
  std::snprintf(expected, sizeof(expected), "%.9g", x.GetDouble(5));
  const std::string command = std::string(kPython) + " " + script.string() + " " +
                              (dir_ / "saved.npz").string() + " " + expected;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

}  // namespace
}  // namespace convgate::inputs
