#include "io/curl_library.h"

#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {

const CurlLibrary& Curl() {
  return LoadOnce<CurlLibrary>(
      "libcurl.so.4", "reads s3://, gs:// and http(s):// URLs (Debian: apt-get install libcurl4)",
      [](const SharedLibrary& library, CurlLibrary* t) {
        library.Load(&t->easy_init, "curl_easy_init");
        library.Load(&t->easy_cleanup, "curl_easy_cleanup");
        library.Load(&t->easy_reset, "curl_easy_reset");
        library.Load(&t->easy_setopt, "curl_easy_setopt");
        library.Load(&t->easy_perform, "curl_easy_perform");
        library.Load(&t->easy_getinfo, "curl_easy_getinfo");
        library.Load(&t->easy_strerror, "curl_easy_strerror");
        library.Load(&t->slist_append, "curl_slist_append");
        library.Load(&t->slist_free_all, "curl_slist_free_all");
        const CURLcode rc =
            library.Function<decltype(&curl_global_init)>("curl_global_init")(CURL_GLOBAL_DEFAULT);
        if (rc != CURLE_OK)
          throw Error(std::string("curl_global_init failed: ") + t->easy_strerror(rc));
      });
}

}  // namespace imgpipe
