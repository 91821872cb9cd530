#include "image/webp_anim_library.h"

#include "util/shared_library.h"

namespace imgpipe {

const WebpAnimLibrary& WebpAnim() {
  return LoadOnce<WebpAnimLibrary>(
      "libwebpdemux.so.2", "decodes animated WebP (Debian: apt-get install libwebpdemux2)",
      [](const SharedLibrary& library, WebpAnimLibrary* t) {
        library.Load(&t->decoder_new_internal, "WebPAnimDecoderNewInternal");
        library.Load(&t->decoder_get_info, "WebPAnimDecoderGetInfo");
        library.Load(&t->decoder_get_next, "WebPAnimDecoderGetNext");
        library.Load(&t->decoder_delete, "WebPAnimDecoderDelete");
      });
}

}  // namespace imgpipe
