#include "io/curl_library.h"

#include <mutex>
#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {

const CurlLibrary& Curl() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static CurlLibrary curl;  // written once, inside call_once
  std::call_once(once, [] {
    const SharedLibrary lib("libcurl.so.4",
                            "reads s3://, gs:// and http(s):// URLs (Debian: apt-get install libcurl4)");
    CurlLibrary c;
    lib.Load(&c.easy_init, "curl_easy_init");
    lib.Load(&c.easy_cleanup, "curl_easy_cleanup");
    lib.Load(&c.easy_reset, "curl_easy_reset");
    lib.Load(&c.easy_setopt, "curl_easy_setopt");
    lib.Load(&c.easy_perform, "curl_easy_perform");
    lib.Load(&c.easy_getinfo, "curl_easy_getinfo");
    lib.Load(&c.easy_strerror, "curl_easy_strerror");
    lib.Load(&c.slist_append, "curl_slist_append");
    lib.Load(&c.slist_free_all, "curl_slist_free_all");
    const CURLcode rc = lib.Function<decltype(&curl_global_init)>("curl_global_init")(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) throw Error(std::string("curl_global_init failed: ") + c.easy_strerror(rc));
    curl = c;  // the library stays loaded: requests may run until the process exits
  });
  return curl;
}

}  // namespace imgpipe
