// libcurl is loaded on the first HTTP exchange, not linked (curl_on_demand.cc says why).
#pragma once

#include <string>

namespace convgate::hub {

// Why libcurl could not be loaded ("cannot load libcurl.so.4: <dlerror>"), or "" when it was (or
// has not been needed yet).
std::string CurlLoadError();

}  // namespace convgate::hub
