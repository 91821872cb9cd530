// libwebpdemux, loaded with dlopen (libwebpdemux.so.2) at the first animated WebP, so that
// a process that never reads one never maps it. Its WebPAnimDecoder is the API Pillow's
// _webp module reads WebP with: the first frame composited on the canvas as Pillow shows
// it. Only webp_anim_decoder.cc calls it, through this table.
#pragma once

#include <webp/demux.h>

namespace imgpipe {

struct WebpAnimLibrary {
  decltype(&WebPAnimDecoderNewInternal) decoder_new_internal = nullptr;
  decltype(&WebPAnimDecoderGetInfo) decoder_get_info = nullptr;
  decltype(&WebPAnimDecoderGetNext) decoder_get_next = nullptr;
  decltype(&WebPAnimDecoderDelete) decoder_delete = nullptr;
};

// libwebpdemux's functions, loaded once per process (thread-safe; later calls return the
// same table). Throws Error naming libwebpdemux.so.2 and why it did not load, again at
// each call.
const WebpAnimLibrary& WebpAnim();

}  // namespace imgpipe
