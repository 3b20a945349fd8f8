// ONNX backend test-case folders:
//   case_dir/model.onnx (optional)
//   case_dir/test_data_set_0/input_0.pb ... input_K.pb, output_0.pb ... output_M.pb
//   case_dir/test_data_set_1/...
// A path may name the case folder (all data sets, in numeric order) or one test_data_set_N folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "convgate/core/limits.h"
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

// True if `path` is a test_data_set_N folder itself.
bool IsTestDataSetDir(const std::filesystem::path& path);

// Reads every data set. Errors name the .pb file. A data set folder with neither inputs nor outputs
// is DataLoss, and so is a gap in the numbering (input_0.pb, input_2.pb) because names are matched
// by position, and two files whose tensors end up with the same name. Other files in the folders
// are ignored. A missing folder, or one with no test_data_set_N inside, is NotFound.
// `load_outputs` false skips output_K.pb (when only inputs are wanted). Each .pb is read under
// `limits` (ReadTensorProto).
Result<std::vector<TestDataSet>> ReadTestCase(const std::filesystem::path& path,
                                              const TestCaseNames& names, bool load_outputs = true,
                                              const Limits& limits = Limits());

// The two halves of a data set: input_K.pb and output_K.pb files.
enum class TestCasePart { kInputs, kOutputs };

// Writes `case_dir`/test_data_set_<index>/input_K.pb and output_K.pb (either map may be empty),
// each atomically, with TensorProto.name set to the map's name. input_K.pb / output_K.pb files left
// from an earlier write with more tensors are deleted so the folder reads back as written.
Status WriteTestDataSet(const std::filesystem::path& case_dir, int index, const TensorMap& inputs,
                        const TensorMap& outputs);

// Writes one half of `case_dir`/test_data_set_<index> (input_K.pb for kInputs, output_K.pb for
// kOutputs) as WriteTestDataSet does, and leaves the other half's files untouched: inputs and
// outputs saved by separate calls end up side by side. Stale files of `part` with a larger K are
// deleted; an empty map deletes every file of `part`.
Status WriteTestDataSetPart(const std::filesystem::path& case_dir, int index, TestCasePart part,
                            const TensorMap& tensors);

// True if a test_data_set_N folder of `case_dir` (or `case_dir` itself, when it is one) holds a
// file of `part`. False for a path that is not a folder.
bool TestCaseHolds(const std::filesystem::path& case_dir, TestCasePart part);

// The model.onnx beside the data sets, if there is one: case_dir/model.onnx or
// test_data_set_N/../model.onnx. Empty path when absent.
std::filesystem::path TestCaseModelPath(const std::filesystem::path& path);

}  // namespace convgate::io
