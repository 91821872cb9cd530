#include "image/webp_anim_library.h"

#include <mutex>

#include "util/shared_library.h"

namespace imgpipe {

const WebpAnimLibrary& WebpAnim() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static WebpAnimLibrary webp;  // written once, inside call_once
  std::call_once(once, [] {
    const SharedLibrary lib("libwebpdemux.so.2",
                            "decodes animated WebP (Debian: apt-get install libwebpdemux2)");
    WebpAnimLibrary w;
    lib.Load(&w.decoder_new_internal, "WebPAnimDecoderNewInternal");
    lib.Load(&w.decoder_get_info, "WebPAnimDecoderGetInfo");
    lib.Load(&w.decoder_get_next, "WebPAnimDecoderGetNext");
    lib.Load(&w.decoder_delete, "WebPAnimDecoderDelete");
    webp = w;  // the library stays loaded: decoders may run until the process exits
  });
  return webp;
}

}  // namespace imgpipe
