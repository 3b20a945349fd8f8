// The source and build folders of the tree the tests were built from.
//
// They come from one generated file per build folder (test_paths.cc.in), not from a -D on every
// test's compile line: a compile line naming the checkout's folder differs between checkouts, so
// ccache could not share a test object between /work/main, a worktree and CI's clean checkout.
// Every test target force-includes this header (tests/CMakeLists.txt), so CONVGATE_SOURCE_DIR and
// CONVGATE_BINARY_DIR read like the string constants they used to be.
#ifndef CONVGATE_TESTS_TESTING_TEST_PATHS_H_
#define CONVGATE_TESTS_TESTING_TEST_PATHS_H_

namespace convgate::testing {

const char* SourceDir();
const char* BinaryDir();

}  // namespace convgate::testing

#define CONVGATE_SOURCE_DIR ::convgate::testing::SourceDir()
#define CONVGATE_BINARY_DIR ::convgate::testing::BinaryDir()

#endif  // CONVGATE_TESTS_TESTING_TEST_PATHS_H_
