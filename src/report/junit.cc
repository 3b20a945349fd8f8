// junit.xml for CI systems: one <testcase> per output per sample, named so a CI page reads
// "sample 0 / logits"; the failure text is the same sentence the console prints.
#include <sstream>

#include "agreement_report.h"
#include "convgate/report/report.h"

namespace convgate::report {
namespace {

std::string Escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 forbids most control characters; tensor names should not hold them anyway.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

struct Case {
  std::string classname;
  std::string name;
  std::vector<std::string> failures;
  bool error = false;
};

std::string Render(const std::string& suite, const std::vector<Case>& cases, double seconds) {
  size_t failures = 0, errors = 0;
  for (const Case& c : cases) {
    if (c.error) {
      ++errors;
    } else if (!c.failures.empty()) {
      ++failures;
    }
  }
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  xml << "<testsuites>\n  <testsuite name=\"" << Escape(suite) << "\" tests=\"" << cases.size()
      << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" time=\"" << seconds
      << "\">\n";
  for (const Case& c : cases) {
    xml << "    <testcase classname=\"" << Escape(c.classname) << "\" name=\"" << Escape(c.name)
        << "\"";
    if (c.failures.empty()) {
      xml << "/>\n";
      continue;
    }
    std::string body;
    for (const std::string& line : c.failures) body += line + "\n";
    const char* tag = c.error ? "error" : "failure";
    xml << ">\n      <" << tag << " message=\"" << Escape(c.failures.front()) << "\">"
        << Escape(body) << "</" << tag << ">\n    </testcase>\n";
  }
  xml << "  </testsuite>\n</testsuites>\n";
  return xml.str();
}

Case ErrorCase(const std::string& classname, const gate::GateError& error) {
  return Case{classname, std::string(gate::StageName(error.stage)), {ErrorLine(error)}, true};
}

}  // namespace

std::string JUnitXml(const gate::RunReport& report, const Invocation& invocation) {
  const std::string classname = "convgate.run." + report.model.path;
  std::vector<Case> cases;
  for (const gate::SanityCheck& check : report.checks) {
    cases.push_back({classname, "sample " + std::to_string(check.sample) + " / " + check.output,
                     check.failures, false});
  }
  if (report.error) cases.push_back(ErrorCase(classname, *report.error));
  return Render("convgate run", cases, invocation.seconds);
}

std::string JUnitXml(const gate::CompareReport& report, const Invocation& invocation) {
  const std::string classname = "convgate.compare." + report.target.path;
  std::vector<Case> cases;
  if (!report.structure_failures.empty()) {
    cases.push_back({classname, "structure", report.structure_failures, false});
  }
  for (const gate::OutputCheck& check : report.checks) {
    std::vector<std::string> lines = check.failures;
    for (const std::string& hint : check.hints) lines.push_back("hint: " + hint);
    if (check.passed) lines.clear();
    cases.push_back(
        {classname, "sample " + std::to_string(check.sample) + " / " + check.output, lines, false});
  }
  for (auto& [name, lines] : internal::AgreementCases(report)) {
    cases.push_back({classname, name, lines, false});
  }
  if (report.error) cases.push_back(ErrorCase(classname, *report.error));
  return Render("convgate compare", cases, invocation.seconds);
}

}  // namespace convgate::report
