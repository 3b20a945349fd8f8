// Saved inputs and outputs on the real binary (issue 9): --save-inputs and --save-outputs to one
// folder make an ONNX test case that reloads as a source.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convgate/core/file_util.h"
#include "convgate/io/npy.h"
#include "convgate/io/npz.h"
#include "convgate/io/test_case.h"
#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Describe;
using testing::ProcessResult;

const fs::path kModels = fs::path(CONVGATE_BINARY_DIR) / "examples";
// One input x, one output y (libonnx-testdata).
const fs::path kAbsCase = "/usr/share/libonnx-testdata/data/node/test_abs";

class SavedDataCliTest : public testing::CliTest {
 protected:
  static std::string Model(const std::string& name) { return (kModels / name).string(); }

  static Tensor Floats(std::vector<float> values) {
    return Tensor::FromVector<float>(DType::kFloat32,
                                     Shape::Of({static_cast<int64_t>(values.size())}), values);
  }
  // An .npz of float32 vectors, in the order given.
  std::string Npz(const std::string& name,
                  const std::vector<std::pair<std::string, std::vector<float>>>& members) {
    TensorMap map;
    for (const auto& [key, values] : members) map.InsertOrAssign(key, Floats(values));
    EXPECT_TRUE(io::WriteNpz(dir_ / name, map).ok());
    return Path(name);
  }
  std::string Npy(const std::string& name, Tensor tensor) {
    EXPECT_TRUE(io::WriteNpy(dir_ / name, tensor).ok());
    return Path(name);
  }
  static std::vector<std::string> Files(const fs::path& dir) {
    std::vector<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).string());
    }
    std::sort(files.begin(), files.end());
    return files;
  }
};

// The data loss of issue 9: outputs went to input_K.pb, over the inputs, and the folder no longer
// loaded.
TEST_F(SavedDataCliTest, InputsAndOutputsSavedToOneFolderReloadAsATestCase) {
  const std::string folder = Path("case");
  ProcessResult saved =
      Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"), "--samples", "2",
                "--save-inputs", folder, "--save-outputs", folder});
  ASSERT_EQ(saved.exit_code, 0) << Describe(saved);
  EXPECT_NE(saved.out.find("inputs saved to " + folder), std::string::npos) << saved.out;
  EXPECT_NE(saved.out.find("source outputs saved to " + folder), std::string::npos) << saved.out;
  const std::vector<std::string> data_set = {"input_0.pb", "output_0.pb", "output_1.pb"};
  std::vector<std::string> expected;
  for (const char* set : {"test_data_set_0/", "test_data_set_1/"}) {
    for (const std::string& file : data_set) expected.push_back(set + file);
  }
  EXPECT_EQ(Files(folder), expected);

  ProcessResult good = Convgate({"compare", folder, Model("tinycnn_converted.onnx"), "--json"});
  ASSERT_EQ(good.exit_code, 0) << Describe(good);
  const json report = json::parse(good.out);
  EXPECT_EQ(report["summary"]["checks"], 4);
  EXPECT_EQ(report["source"]["outputs"], json({"logits", "probs"}));
  ProcessResult bad =
      Convgate({"compare", "--load-outputs", folder, Model("tinycnn_perturbed.onnx")});
  EXPECT_EQ(bad.exit_code, 1) << Describe(bad);
  // The same command again rewrites both halves.
  EXPECT_EQ(Convgate({"compare", Model("tinycnn.onnx"), Model("tinycnn_converted.onnx"),
                      "--samples", "2", "--save-inputs", folder, "--save-outputs", folder})
                .exit_code,
            0);
  EXPECT_EQ(Files(folder), expected);
}

}  // namespace
}  // namespace convgate
