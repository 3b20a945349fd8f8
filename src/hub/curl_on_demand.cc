// libcurl (Debian's libcurl4-openssl-dev) brings about 30 shared libraries with it (GnuTLS,
// Kerberos, LDAP, SSH, IDN...): linked, every convgate process mapped them, and `convgate
// --version` took 4x a hello-world linked with ONNX Runtime instead of under 3x. Only `hf://`
// models use HTTP, so convgate does not link libcurl: the functions http.cc calls are defined here
// and forward to libcurl's own, loaded with dlopen at the first call. When it cannot be loaded they
// fail the way libcurl reports failures (NULL handles, CURLE_FAILED_INIT), and CurlLoadError says
// why.
#define CURL_DISABLE_TYPECHECK  // curl_easy_setopt is defined here, not wrapped in a macro
#include "hub/curl_on_demand.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <cstdarg>
#include <mutex>

namespace convgate::hub {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& Loaded() {
  static const Library library = [] {
    Library loaded;
    loaded.handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (loaded.handle == nullptr) {
      loaded.error = std::string("cannot load ") + kLibrary + ": " + ::dlerror();
    }
    return loaded;
  }();
  return library;
}

// libcurl's `symbol` as a `Function`, or nullptr when libcurl (or the symbol) is missing.
template <typename Function>
Function Resolve(const char* symbol) {
  const Library& library = Loaded();
  if (library.handle == nullptr) return nullptr;
  return reinterpret_cast<Function>(::dlsym(library.handle, symbol));
}

}  // namespace

std::string CurlLoadError() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] { error = Loaded().error; });
  return error;
}

}  // namespace convgate::hub

using convgate::hub::Resolve;

// Each forwarder resolves its function once (a static), then calls it.
#define CONVGATE_CURL_FUNCTION(name) static const auto real = Resolve<decltype(&::name)>(#name)

extern "C" {

CURLcode curl_global_init(long flags) {
  CONVGATE_CURL_FUNCTION(curl_global_init);
  return real ? real(flags) : CURLE_FAILED_INIT;
}

CURL* curl_easy_init(void) {
  CONVGATE_CURL_FUNCTION(curl_easy_init);
  return real ? real() : nullptr;
}

void curl_easy_cleanup(CURL* curl) {
  CONVGATE_CURL_FUNCTION(curl_easy_cleanup);
  if (real) real(curl);
}

CURLcode curl_easy_perform(CURL* curl) {
  CONVGATE_CURL_FUNCTION(curl_easy_perform);
  return real ? real(curl) : CURLE_FAILED_INIT;
}

// The one argument after `option` has the type the option's number range says (curl.h's
// CURLOPTTYPE_*), and is passed on as that type.
CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  CONVGATE_CURL_FUNCTION(curl_easy_setopt);
  if (!real) return CURLE_FAILED_INIT;
  va_list args;
  va_start(args, option);
  CURLcode code;
  if (option < CURLOPTTYPE_OBJECTPOINT) {
    code = real(curl, option, va_arg(args, long));
  } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
    code = real(curl, option, va_arg(args, void*));
  } else if (option < CURLOPTTYPE_OFF_T) {
    code = real(curl, option, va_arg(args, void (*)()));
  } else if (option < CURLOPTTYPE_BLOB) {
    code = real(curl, option, va_arg(args, curl_off_t));
  } else {
    code = real(curl, option, va_arg(args, void*));
  }
  va_end(args);
  return code;
}

const char* curl_easy_strerror(CURLcode code) {
  CONVGATE_CURL_FUNCTION(curl_easy_strerror);
  return real ? real(code) : "libcurl could not be loaded";
}

void curl_free(void* pointer) {
  CONVGATE_CURL_FUNCTION(curl_free);
  if (real) real(pointer);
}

struct curl_slist* curl_slist_append(struct curl_slist* list, const char* text) {
  CONVGATE_CURL_FUNCTION(curl_slist_append);
  return real ? real(list, text) : nullptr;
}

void curl_slist_free_all(struct curl_slist* list) {
  CONVGATE_CURL_FUNCTION(curl_slist_free_all);
  if (real) real(list);
}

CURLU* curl_url(void) {
  CONVGATE_CURL_FUNCTION(curl_url);
  return real ? real() : nullptr;
}

void curl_url_cleanup(CURLU* handle) {
  CONVGATE_CURL_FUNCTION(curl_url_cleanup);
  if (real) real(handle);
}

CURLUcode curl_url_get(CURLU* handle, CURLUPart what, char** part, unsigned int flags) {
  CONVGATE_CURL_FUNCTION(curl_url_get);
  return real ? real(handle, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

CURLUcode curl_url_set(CURLU* handle, CURLUPart what, const char* part, unsigned int flags) {
  CONVGATE_CURL_FUNCTION(curl_url_set);
  return real ? real(handle, what, part, flags) : CURLUE_OUT_OF_MEMORY;
}

}  // extern "C"
