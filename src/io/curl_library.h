// libcurl, loaded with dlopen (libcurl.so.4) at the first request over HTTP(S), S3 or GCS,
// so that a process that reads only local files never maps it nor the twenty-odd
// libraries it pulls in (GnuTLS, Kerberos, LDAP, SSH, RTMP: about 10 ms of every start
// of imgpipe). Only http_client.cc calls libcurl, through this table.
#pragma once

#include <curl/curl.h>

namespace imgpipe {

struct CurlLibrary {
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_reset) easy_reset = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
};

// libcurl's functions, loaded and curl_global_init'ed once per process (thread-safe;
// later calls return the same table). Throws Error naming libcurl.so.4 and why it did
// not load, again at each call.
const CurlLibrary& Curl();

}  // namespace imgpipe
