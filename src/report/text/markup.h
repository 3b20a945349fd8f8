// Text inside XML and HTML (junit.xml, the HTML report): one escaping for both.
#pragma once

#include <string>

namespace convgate::report {

// XML 1.0 text: the document says it is UTF-8, and XML cannot hold most control characters even
// as references, so invalid bytes and controls are spelled \xNN (EscapeForDisplay) before the
// markup characters become entities.
// Attribute values are always written in double quotes, so ' needs no entity.
std::string EscapeMarkup(const std::string& text);

}  // namespace convgate::report
