// Fuzz target for the policy file (`--policy FILE.yaml`, compare/policy_file.cc over yaml-cpp). A
// policy that parses is resolved for every output it names, and must survive report.json: compare
// writes it there (PolicyJson) and `convgate check` reads it back (PolicyFromJson) to re-judge.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "convgate/compare/policy_file.h"
#include "convgate/report/json_text.h"
#include "convgate/report/report.h"
#include "report/json/policy.h"
#include "report/json/reader.h"
#include "report/text/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  convgate::Result<convgate::compare::Policy> policy =
      convgate::compare::ParsePolicyYaml(text, "fuzz.yaml");
  if (!policy.ok()) return 0;
  for (const std::string& output : policy->NamedOutputs()) {
    (void)policy->For(output, convgate::DType::kFloat16, convgate::DType::kFloat32);
  }
  (void)policy->For("unnamed");
  (void)convgate::report::internal::PolicySummaryText(*policy);
  // Serialized as report.json is written.
  const nlohmann::json written = convgate::report::internal::PolicyJson(*policy);
  const std::string written_text = convgate::report::DumpJson(written);
  // As `check` reads it: names that are not UTF-8 come back from their escaped form.
  nlohmann::json parsed = nlohmann::json::parse(written_text);
  convgate::report::internal::RestoreEscapedStrings(parsed);
  try {
    const convgate::compare::Policy read = convgate::report::internal::PolicyFromJson(
        convgate::report::internal::JsonFields(parsed, "policy"));
    const std::string reread_text =
        convgate::report::DumpJson(convgate::report::internal::PolicyJson(read));
    if (reread_text != written_text) {
      std::fprintf(stderr, "policy changed in a round trip through report.json:\n%s\n%s\n",
                   written_text.c_str(), reread_text.c_str());
      __builtin_trap();
    }
  } catch (const convgate::report::internal::BadField&) {
    __builtin_trap();  // report.json's policy that check cannot read
  }
  return 0;
}
