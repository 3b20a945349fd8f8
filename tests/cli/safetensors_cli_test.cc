// safetensors as --load-inputs, --save-outputs / --save-inputs and --load-outputs, and as the
// saved outputs `compare` takes, on the real binary; files written by the `safetensors` package of
// the project venv are read here and files written here are read by it (bf16 and fp16 included).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli_fixture.h"

namespace convgate::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kTinyCnn = fs::path(CONVGATE_BINARY_DIR) / "examples/tinycnn.onnx";

class SafetensorsCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    python_ = ProjectVenvPython();
    if (!fs::exists(python_)) {
      GTEST_SKIP() << "no project venv at " << python_ << " (scripts/setup.sh)";
    }
  }

  // `code` in the venv's python, run in the test's folder; its stdout.
  std::string Python(const std::string& code) {
    ProcessResult result =
        RunProcess({"/bin/sh", "-c",
                    "cd '" + dir_.string() + "' && '" + python_.string() + "' -c \"$0\"", code});
    EXPECT_EQ(result.exit_code, 0) << Describe(result);
    return result.out;
  }

  fs::path python_;
};

TEST_F(SafetensorsCliTest, InputsAndOutputsRoundTripWithTheSafetensorsPackage) {
  // Inputs written by safetensors.numpy: two samples in the sample_<i>/<name> layout.
  Python(
      "import numpy as np; from safetensors.numpy import save_file\n"
      "r = np.random.default_rng(7)\n"
      "save_file({f'sample_{i}/image': r.random((1, 3, 16, 16), dtype=np.float32)"
      " for i in range(2)}, 'in.safetensors')");
  ProcessResult run =
      Convgate({"run", kTinyCnn.string(), "--load-inputs", Path("in.safetensors"), "--save-outputs",
                Path("out.safetensors"), "--save-inputs", Path("in_again.npz")});
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  ProcessResult npz = Convgate({"run", kTinyCnn.string(), "--load-inputs", Path("in_again.npz"),
                                "--save-outputs", Path("out.npz")});
  ASSERT_EQ(npz.exit_code, 0) << Describe(npz);
  // What convgate wrote, read by the package: the same names and values as the .npz.
  const std::string read = Python(
      "import numpy as np; from safetensors.numpy import load_file\n"
      "s = load_file('out.safetensors'); n = dict(np.load('out.npz'))\n"
      "assert sorted(s) == sorted(n), (sorted(s), sorted(n))\n"
      "assert all(np.array_equal(s[k], n[k]) for k in s)\n"
      "print(sorted(s))");
  EXPECT_NE(read.find("sample_1/logits"), std::string::npos) << read;
  // Saved outputs against saved outputs, across the two formats.
  ProcessResult same = Convgate({"compare", Path("out.npz"), Path("out.safetensors")});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  // --load-outputs takes a .safetensors as the source.
  ProcessResult loaded = Convgate({"compare", "--load-outputs", Path("out.safetensors"),
                                   kTinyCnn.string(), "--load-inputs", Path("in.safetensors")});
  EXPECT_EQ(loaded.exit_code, 0) << Describe(loaded);
}

TEST_F(SafetensorsCliTest, HalfAndBfloat16OutputsWrittenByTorchCompare) {
  ASSERT_EQ(
      Convgate({"run", kTinyCnn.string(), "--save-outputs", Path("out.safetensors")}).exit_code, 0);
  // The outputs rounded to bf16 and fp16 by torch's safetensors writer, and the same scaled by 5%
  // (a difference both types resolve: bf16 keeps 8 bits of mantissa, fp16 11). The largest bf16
  // logit, as torch reads it back, on stdout.
  const std::string printed = Python(
      "import torch; from safetensors.torch import load_file, save_file\n"
      "s = load_file('out.safetensors')\n"
      "for name, dtype in (('bf16', torch.bfloat16), ('fp16', torch.float16)):\n"
      "    save_file({k: v.to(dtype) for k, v in s.items()}, name + '_a.safetensors')\n"
      "    save_file({k: (v * 1.05).to(dtype) for k, v in s.items()}, name + '_b.safetensors')\n"
      "print(repr(load_file('bf16_a.safetensors')['logits'].float().max().item()))");
  ProcessResult inspect = Convgate({"inspect", Path("bf16_a.safetensors"), "--json"});
  ASSERT_EQ(inspect.exit_code, 0) << Describe(inspect);
  const nlohmann::json tensors = nlohmann::json::parse(inspect.out)["tensors"];
  ASSERT_EQ(tensors[0]["name"], "logits") << inspect.out;
  EXPECT_EQ(tensors[0]["stats"]["dtype"], "bfloat16");
  EXPECT_EQ(tensors[0]["stats"]["max"].get<double>(), std::stod(printed)) << printed;
  for (const std::string type : {"bf16", "fp16"}) {
    const std::string a = Path(type + "_a.safetensors");
    const std::string b = Path(type + "_b.safetensors");
    ProcessResult loose = Convgate({"compare", a, b, "--atol", "0.2", "--rtol", "0.1"});
    EXPECT_EQ(loose.exit_code, 0) << type << "\n" << Describe(loose);
    ProcessResult strict = Convgate({"compare", a, b, "--atol", "1e-4", "--rtol", "1e-3"});
    EXPECT_EQ(strict.exit_code, 1) << type << "\n" << Describe(strict);
  }
}

TEST_F(SafetensorsCliTest, BrokenFilesAreNamedWithTheirTensor) {
  Python(
      "import numpy as np; from safetensors.numpy import save_file\n"
      "save_file({'image': np.zeros((1, 3, 16, 16), np.float32)}, 'in.safetensors')");
  fs::resize_file(dir_ / "in.safetensors", fs::file_size(dir_ / "in.safetensors") - 4);
  ProcessResult truncated =
      Convgate({"run", kTinyCnn.string(), "--load-inputs", Path("in.safetensors")});
  EXPECT_EQ(truncated.exit_code, 3) << Describe(truncated);
  EXPECT_NE(truncated.err.find(Path("in.safetensors")), std::string::npos) << truncated.err;
  EXPECT_NE(truncated.err.find("tensor 'image' is cut short"), std::string::npos) << truncated.err;
  ProcessResult compare = Convgate({"compare", Path("in.safetensors"), Path("in.safetensors")});
  EXPECT_EQ(compare.exit_code, 3) << Describe(compare);
  EXPECT_NE(compare.err.find("tensor 'image' is cut short"), std::string::npos) << compare.err;
  // Not a saved-outputs format: refused before anything runs.
  ProcessResult bad_save = Convgate({"run", kTinyCnn.string(), "--save-outputs", Path("o.h5")});
  EXPECT_EQ(bad_save.exit_code, 2) << Describe(bad_save);
  EXPECT_NE(bad_save.err.find("NAME.safetensors"), std::string::npos) << bad_save.err;
}

}  // namespace
}  // namespace convgate::testing
