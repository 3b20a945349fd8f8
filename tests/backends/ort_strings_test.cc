// String tensors through ONNX Runtime: inputs copied into ORT's own string tensors, outputs read
// back element by element, with empty strings, NUL bytes and non-ASCII text intact.
#include <clocale>
#include <string>
#include <vector>

#include "backends/ort_test_fixture.h"

namespace convgate::backends {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> values) {
  return std::move(Tensor::FromStrings(std::move(shape), std::move(values)).value());
}

std::vector<std::string> StringsOf(const Tensor& tensor) {
  return std::vector<std::string>(tensor.strings().begin(), tensor.strings().end());
}

constexpr char kIdentity[] = R"(
<ir_version: 8, opset_import: ["" : 17]>
g (string[N, 2] s) => (string[N, 2] t) { t = Identity(s) }
)";

TEST_F(OrtTest, StringsPassThroughUnchanged) {
  std::unique_ptr<Model> model = LoadText(kIdentity);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->signature().inputs[0].dtype, DType::kString);
  const std::vector<std::string> values = {"monday",
                                           "",
                                           "K\xC3\xB6ln \xF0\x9F\x98\x80",
                                           std::string("nul\0inside", 10),
                                           "\xff\xfe",
                                           std::string(1000, 'x')};
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("s", Strings(Shape::Of({3, 2}), values)).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor& t = *outputs->Find("t");
  EXPECT_EQ(t.Describe(), "string[3, 2]");
  EXPECT_EQ(StringsOf(t), values);
}

TEST_F(OrtTest, EmptyStringTensorsRun) {
  std::unique_ptr<Model> model = LoadText(kIdentity);
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("s", Strings(Shape::Of({0, 2}), {})).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(outputs->Find("t")->Describe(), "string[0, 2]");
}

TEST_F(OrtTest, NumbersForAStringInputAreRefused) {
  std::unique_ptr<Model> model = LoadText(kIdentity);
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("s", Zeros(DType::kUInt8, Shape::Of({1, 2}))).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(outputs.status(), "input 's' is uint8[1, 2], the model wants string[N, 2]"))
      << outputs.status().ToString();
}

TEST_F(OrtTest, StringsMeetNumbersInsideTheGraph) {
  // Cast both ways, and a string intermediate fetched like any other value.
  std::unique_ptr<Model> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (string[3] s) => (float[3] f, string[3] back) {
  f = Cast<to = 1>(s)
  text = Cast<to = 8>(f)
  back = Identity(text)
}
)");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(inputs.Insert("s", Strings(Shape::Of({3}), {"1.5", "-2", "0.25"})).ok());
  Result<TensorMap> outputs = model->Run(inputs, {"f", "text"});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  const Tensor& f = *outputs->Find("f");
  EXPECT_EQ(f.GetDouble(0), 1.5);
  EXPECT_EQ(f.GetDouble(1), -2.0);
  EXPECT_EQ(outputs->Find("text")->dtype(), DType::kString);
  EXPECT_EQ(outputs->Find("text")->strings().size(), 3u);
}

TEST_F(OrtTest, RunsStringNormalizer) {
  // ORT's StringNormalizer builds a std::locale for its 'locale' attribute (en_US.UTF-8 here) and
  // fails without it: skip where the locale is not installed.
  const char* previous = std::setlocale(LC_ALL, nullptr);
  const std::string saved = previous != nullptr ? previous : "C";
  const bool have_locale = std::setlocale(LC_ALL, "en_US.UTF-8") != nullptr;
  std::setlocale(LC_ALL, saved.c_str());
  if (!have_locale) GTEST_SKIP() << "the en_US.UTF-8 locale is not installed";
  std::unique_ptr<Model> model = LoadText(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (string[4] s) => (string[?] t) {
  t = StringNormalizer<case_change_action = "UPPER", stopwords = ["monday"]>(s)
}
)");
  ASSERT_NE(model, nullptr);
  TensorMap inputs;
  ASSERT_TRUE(
      inputs.Insert("s", Strings(Shape::Of({4}), {"monday", "tuesday", "k\xC3\xB6ln", ""})).ok());
  Result<TensorMap> outputs = model->Run(inputs, {});
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();
  EXPECT_EQ(StringsOf(*outputs->Find("t")),
            (std::vector<std::string>{"TUESDAY", "K\xC3\x96LN", ""}));
}

}  // namespace
}  // namespace convgate::backends
