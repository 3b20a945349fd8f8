#include "store/store_test_backend.h"

#include <unistd.h>

#include <cctype>

namespace convgate::store::testing {

std::string DatabaseNameFor(const std::string& name) {
  std::string id = "cg_";
  for (char c : name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    id += std::isalnum(static_cast<unsigned char>(lower)) ? lower : '_';
  }
  if (id.size() > 40) id.resize(40);
  return id + "_" + std::to_string(::getpid());
}

std::string WithDatabase(const std::string& admin_url, const std::string& database) {
  const size_t slash = admin_url.find("///");
  const size_t query = admin_url.find('?');
  return admin_url.substr(0, slash + 3) + database + admin_url.substr(query);
}

}  // namespace convgate::store::testing
