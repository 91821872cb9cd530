#include "io/curl_library.h"

#include <mutex>
#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {
namespace {

constexpr char kLibcurl[] = "libcurl.so.4";

// `name` from libcurl's `handle` as a `T`.
template <typename T>
T Symbol(void* handle, const char* name) {
  return SharedLibraryFunction<T>(handle, kLibcurl, name);
}

}  // namespace

const CurlLibrary& Curl() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static CurlLibrary curl;  // written once, inside call_once
  std::call_once(once, [] {
    std::string error;
    void* handle = OpenSharedLibrary(kLibcurl, &error);
    if (handle == nullptr) {
      throw Error(std::string("cannot load ") + kLibcurl + ", which reads s3://, gs:// and " +
                  "http(s):// URLs (Debian: apt-get install libcurl4): " + error);
    }
    CurlLibrary loaded;
    loaded.easy_init = Symbol<decltype(loaded.easy_init)>(handle, "curl_easy_init");
    loaded.easy_cleanup = Symbol<decltype(loaded.easy_cleanup)>(handle, "curl_easy_cleanup");
    loaded.easy_reset = Symbol<decltype(loaded.easy_reset)>(handle, "curl_easy_reset");
    loaded.easy_setopt = Symbol<decltype(loaded.easy_setopt)>(handle, "curl_easy_setopt");
    loaded.easy_perform = Symbol<decltype(loaded.easy_perform)>(handle, "curl_easy_perform");
    loaded.easy_getinfo = Symbol<decltype(loaded.easy_getinfo)>(handle, "curl_easy_getinfo");
    loaded.easy_strerror = Symbol<decltype(loaded.easy_strerror)>(handle, "curl_easy_strerror");
    loaded.slist_append = Symbol<decltype(loaded.slist_append)>(handle, "curl_slist_append");
    loaded.slist_free_all = Symbol<decltype(loaded.slist_free_all)>(handle, "curl_slist_free_all");
    auto global_init = Symbol<decltype(&curl_global_init)>(handle, "curl_global_init");
    const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
      throw Error(std::string(kLibcurl) + ": curl_global_init failed (" + loaded.easy_strerror(rc) + ")");
    }
    curl = loaded;  // the handle stays open: requests may run until the process exits
  });
  return curl;
}

}  // namespace imgpipe
