// Backends as modules loaded on first use: `convgate --version`, inspect and a comparison of saved
// outputs load neither libtorch nor OpenCV (the dynamic loader's own log says what was loaded),
// while a command that runs a model on them does; a missing or broken module is exit 3 naming
// the file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/cli_fixture.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using testing::Describe;
using testing::ProcessResult;

const std::string kExamples = std::string(CONVGATE_BINARY_DIR) + "/examples/";

class PluginsCliTest : public testing::CliTest {
 protected:
  // Runs convgate under LD_DEBUG=files and returns what the dynamic loader loaded (its log).
  std::string LoadedLibraries(const std::vector<std::string>& args, int want_exit = 0) {
    ::setenv("LD_DEBUG", "files", 1);
    ProcessResult r = Convgate(args);
    ::unsetenv("LD_DEBUG");
    EXPECT_EQ(r.exit_code, want_exit) << Describe(r).substr(0, 4000);
    return r.err;
  }
  static bool Mentions(const std::string& log, const std::string& library) {
    return log.find("file=" + library) != std::string::npos;
  }
};

TEST_F(PluginsCliTest, CommandsThatRunNoHeavyBackendLoadNeither) {
  ASSERT_EQ(
      Convgate({"run", kExamples + "tinycnn.onnx", "--save-outputs", Path("a.npz")}).exit_code, 0);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--version"},
           {"inspect", kExamples + "tinycnn.onnx"},
           {"compare", Path("a.npz"), Path("a.npz")},
           {"compare", kExamples + "tinycnn.onnx", kExamples + "tinycnn_converted.onnx"}}) {
    const std::string log = LoadedLibraries(args);
    ASSERT_NE(log.find("file="), std::string::npos) << "LD_DEBUG gave no log";
    EXPECT_FALSE(Mentions(log, "libtorch")) << args.front();
    EXPECT_FALSE(Mentions(log, "libc10")) << args.front();
    EXPECT_FALSE(Mentions(log, "libopencv")) << args.front();
    EXPECT_FALSE(Mentions(log, "libconvgate_backend")) << args.front();
    // Neither the PostgreSQL store (libpqxx, libpq, Kerberos, LDAP) nor libcurl (GnuTLS, SSH...):
    // a postgresql:// store and hf:// models load them (store/postgres_plugin.h,
    // hub/curl_on_demand.cc).
    EXPECT_FALSE(Mentions(log, "libpq")) << args.front();
    EXPECT_FALSE(Mentions(log, "libconvgate_store")) << args.front();
    EXPECT_FALSE(Mentions(log, "libcurl")) << args.front();
    EXPECT_FALSE(Mentions(log, "libkrb5")) << args.front();
    EXPECT_FALSE(Mentions(log, "libgnutls")) << args.front();
  }
}

// The PostgreSQL store module is loaded for a postgresql:// store, even one that cannot be
// reached (here: nothing listens on port 1), and the message is the store's own.
TEST_F(PluginsCliTest, APostgresStoreLoadsItsModuleWhenAsked) {
  const std::string log = LoadedLibraries(
      {"history", "--store", "postgresql://convgate@127.0.0.1:1/none?connect_timeout=2"}, 3);
  EXPECT_NE(log.find("libconvgate_store_postgres.so"), std::string::npos);
  EXPECT_TRUE(Mentions(log, "libpq"));
  EXPECT_NE(log.find("127.0.0.1"), std::string::npos);  // the store's message names the server
}

// Highway (libhwy) is loaded by the first comparison (compare/hwy_on_demand.cc), not at start-up:
// its static initializer spins for about 2 ms.
TEST_F(PluginsCliTest, HighwayIsLoadedByTheFirstComparisonOnly) {
  ASSERT_EQ(
      Convgate({"run", kExamples + "tinycnn.onnx", "--save-outputs", Path("a.npz")}).exit_code, 0);
  EXPECT_FALSE(Mentions(LoadedLibraries({"--version"}), "libhwy"));
  EXPECT_FALSE(Mentions(LoadedLibraries({"inspect", Path("a.npz")}), "libhwy"));
  EXPECT_TRUE(Mentions(LoadedLibraries({"compare", Path("a.npz"), Path("a.npz")}), "libhwy"));
}

#if CONVGATE_WITH_OPENCV
TEST_F(PluginsCliTest, TheOpenCvBackendLoadsItsModuleWhenAsked) {
  const std::string log =
      LoadedLibraries({"run", kExamples + "tinycnn.onnx", "--backend", "opencv"});
  EXPECT_TRUE(Mentions(log, "libconvgate_backend_opencv.so") ||
              log.find("libconvgate_backend_opencv.so") != std::string::npos);
  EXPECT_NE(log.find("libopencv_dnn"), std::string::npos);
}
#endif

TEST_F(PluginsCliTest, AMissingOrBrokenModuleIsExit3NamingTheFile) {
  // A folder with a broken module first in the search path, and the binary copied away from the
  // build's modules so that nothing else is found.
  const fs::path bin = dir_ / "bin";
  fs::create_directories(bin);
  fs::copy_file(Binary(), bin / "convgate");
  {
    std::ofstream broken(bin / "libconvgate_backend_opencv.so");
    broken << "not an ELF file";
  }
  ProcessResult r = testing::RunProcess(
      {(bin / "convgate").string(), "run", kExamples + "tinycnn.onnx", "--backend", "opencv"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_NE(r.err.find("libconvgate_backend_opencv.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot load the backend module"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace convgate
