#include "convgate/core/status.h"

#include <gtest/gtest.h>

namespace convgate {
namespace {

Result<int> Half(int value) {
  if (value % 2 != 0) return Status::InvalidArgument(std::to_string(value) + " is odd");
  return value / 2;
}

Result<int> Quarter(int value) {
  CONVGATE_ASSIGN_OR_RETURN(int half, Half(value));
  CONVGATE_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(Status, OkCarriesNothing) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "OK");
  EXPECT_TRUE(ok.message().empty());
}

TEST(Status, ContextPrefixesTheMessage) {
  Status status = Status::DataLoss("truncated header").WithContext("a.npy");
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "a.npy: truncated header");
  EXPECT_EQ(status.ToString(), "DataLoss: a.npy: truncated header");
  Status copy = status;
  EXPECT_EQ(copy.message(), status.message());
}

TEST(Result, PropagatesErrors) {
  EXPECT_EQ(*Quarter(12), 3);
  Result<int> bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "3 is odd");
}

TEST(Result, OkStatusWithoutValueIsAnInternalError) {
  Result<int> result{Status::OK()};
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace convgate
