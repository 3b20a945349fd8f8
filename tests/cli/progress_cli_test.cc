// Progress on long work (issue 27, item 6): under a pseudo-terminal (script(1)) the per-node run's
// line is redrawn in place, chunk after chunk, and erased before the result is printed; --quiet
// and a stderr that is no terminal show none of it for short work; the plain mode's periodic
// lines, unit by unit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/progress_line.h"
#include "testing/cli_fixture.h"
#include "testing/subprocess.h"

namespace convgate {
namespace {

namespace fs = std::filesystem;
using testing::Describe;
using testing::ProcessResult;

const fs::path kExamples = fs::path(CONVGATE_BINARY_DIR) / "examples";

class ProgressCliTest : public testing::CliTest {
 protected:
  // The per-node run of deepcnn in 20 chunks (a small memory budget), as a shell command line.
  std::vector<std::string> PerNodeArgs() const {
    return {testing::CliTest::Binary().string(),
            "compare",
            (kExamples / "deepcnn.onnx").string(),
            (kExamples / "deepcnn_fault_weight.onnx").string(),
            "--per-node",
            "--memory-budget",
            "64KiB",
            "--color",
            "never"};
  }
  // `args` run by script(1) on a pseudo-terminal: stdout and stderr both, as a terminal shows
  // them.
  ProcessResult OnTerminal(const std::vector<std::string>& args) {
    std::string command;
    for (const std::string& arg : args) command += "'" + arg + "' ";
    return testing::RunProcess({"/usr/bin/env", "TERM=xterm", "CONVGATE_PROGRESS=1",
                                "/usr/bin/script", "-qfec", command, "/dev/null"});
  }
};

size_t Count(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST_F(ProgressCliTest, ATerminalSeesTheLineRedrawnAndErasedBeforeTheResult) {
  ProcessResult r = OnTerminal(PerNodeArgs());
  ASSERT_EQ(r.exit_code, 1) << Describe(r);  // the weight fault fails the comparison
  // Its first state shows at once; later ones at most every 50 ms (20 chunks each building a
  // session take longer than that).
  EXPECT_NE(r.out.find("\r\x1b[Kper-node [0/20]"), std::string::npos) << r.out;
  EXPECT_GE(Count(r.out, "\r\x1b[Kper-node ["), 2u) << r.out;
  EXPECT_NE(r.out.find(" of 20: 1 tensor of 22 | 0:0"), std::string::npos) << r.out;
  // The last progress line is erased before the verdict is printed.
  const size_t last_line = r.out.rfind("per-node [");
  const size_t erased = r.out.find("\r\x1b[K", last_line);
  const size_t verdict = r.out.find("FAIL:", last_line);
  ASSERT_NE(verdict, std::string::npos) << r.out;
  EXPECT_LT(erased, verdict) << r.out;

  std::vector<std::string> quiet = PerNodeArgs();
  quiet.push_back("--quiet");
  ProcessResult silent = OnTerminal(quiet);
  EXPECT_EQ(silent.exit_code, 1) << Describe(silent);
  EXPECT_EQ(silent.out.find("per-node ["), std::string::npos) << silent.out;
  EXPECT_NE(silent.out.find("FAIL:"), std::string::npos) << silent.out;
}

TEST_F(ProgressCliTest, NoTerminalNoLinesForShortWork) {
  std::vector<std::string> args = PerNodeArgs();
  args.erase(args.begin());
  ProcessResult r = Convgate(args);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_EQ(r.err.find("per-node"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("\r"), std::string::npos);
}

// The plain mode (logs, CI): a task says where it is once it has run 10 s, then every 10 s, and
// when it ends; a short one says nothing.
TEST(ProgressLineTest, PlainLinesForLongTasksOnly) {
  std::ostringstream captured;
  std::streambuf* saved = std::cerr.rdbuf(captured.rdbuf());
  {
    cli::ProgressLine line(cli::ProgressLine::Mode::kLines);
    line.Update({"converting m.onnx (fp16)", 0, 0, "", 0.5}, false);
    line.Update({"converting m.onnx (fp16)", 0, 0, "", 1.0}, true);
    line.Update({"per-node", 3, 10, "chunk 4 of 10", 12.0}, false);
    line.Update({"per-node", 4, 10, "chunk 5 of 10", 13.0}, false);  // within 10 s of the last
    line.Update({"per-node", 10, 10, "", 30.0}, true);
  }
  std::cerr.rdbuf(saved);
  EXPECT_EQ(captured.str(),
            "convgate: per-node [3/10] chunk 4 of 10 | 0:12, ETA 0:28\n"
            "convgate: per-node [10/10] | 0:30 (done)\n");
}

TEST(ProgressLineTest, TextCountsTimesAndCuts) {
  EXPECT_EQ(cli::ProgressLine::Text({"samples", 0, 16, "", 0.2}, 100), "samples [0/16] | 0:00");
  EXPECT_EQ(cli::ProgressLine::Text({"converting x (optimum-onnx)", 0, 0, "attempt 2", 75}, 100),
            "converting x (optimum-onnx) attempt 2 | 1:15");
  EXPECT_EQ(cli::ProgressLine::Text({"per-node", 1, 4, "", 3}, 12).size(), 12u);
}

}  // namespace
}  // namespace convgate
