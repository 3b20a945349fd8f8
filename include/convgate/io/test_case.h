// ONNX backend test-case folders:
//   case_dir/model.onnx (optional)
//   case_dir/test_data_set_0/input_0.pb ... input_K.pb, output_0.pb ... output_M.pb
//   case_dir/test_data_set_1/...
// A path may name the case folder (all data sets, in numeric order) or one test_data_set_N folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convgate/core/status.h"
#include "convgate/core/tensor.h"

namespace convgate::io {

struct TestDataSet {
  std::filesystem::path dir;  // the test_data_set_N folder
  TensorMap inputs;           // input_K.pb in K order
  TensorMap outputs;          // output_K.pb in K order
};

struct TestCaseNames {
  // Names by position, from the model. Where a list is shorter than the files, or empty, a file's
  // TensorProto.name is used; where that is empty too, "input_K" / "output_K".
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

// True if `path` is a test_data_set_N folder or a folder holding at least one of them.
bool IsTestCasePath(const std::filesystem::path& path);

// Reads every data set. Errors name the .pb file. A data set folder with neither inputs nor outputs
// is DataLoss. `load_outputs` false skips output_K.pb (when only inputs are wanted).
Result<std::vector<TestDataSet>> ReadTestCase(const std::filesystem::path& path,
                                              const TestCaseNames& names, bool load_outputs = true);

// Writes `dir`/test_data_set_<index>/input_K.pb and output_K.pb (either map may be empty).
Status WriteTestDataSet(const std::filesystem::path& case_dir, int index, const TensorMap& inputs,
                        const TensorMap& outputs);

// The model.onnx beside the data sets, if there is one: case_dir/model.onnx or
// test_data_set_N/../model.onnx. Empty path when absent.
std::filesystem::path TestCaseModelPath(const std::filesystem::path& path);

}  // namespace convgate::io
