#include "image/heif_library.h"

#include <mutex>
#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {

const HeifLibrary& Heif() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static HeifLibrary heif;  // written once, inside call_once
  std::call_once(once, [] {
    const SharedLibrary lib("libheif.so.1", "decodes HEIF and AVIF (Debian: apt-get install libheif1)");
    HeifLibrary h;
    lib.Load(&h.context_alloc, "heif_context_alloc");
    lib.Load(&h.context_free, "heif_context_free");
    lib.Load(&h.context_read_from_memory_without_copy, "heif_context_read_from_memory_without_copy");
    lib.Load(&h.context_get_primary_image_handle, "heif_context_get_primary_image_handle");
    lib.Load(&h.image_handle_release, "heif_image_handle_release");
    lib.Load(&h.image_handle_get_width, "heif_image_handle_get_width");
    lib.Load(&h.image_handle_get_height, "heif_image_handle_get_height");
    lib.Load(&h.image_handle_has_alpha_channel, "heif_image_handle_has_alpha_channel");
    lib.Load(&h.decode_image, "heif_decode_image");
    lib.Load(&h.image_release, "heif_image_release");
    lib.Load(&h.image_get_plane_readonly, "heif_image_get_plane_readonly");
    lib.Load(&h.image_get_width, "heif_image_get_width");
    lib.Load(&h.image_get_height, "heif_image_get_height");
    const heif_error status = lib.Function<decltype(&heif_init)>("heif_init")(nullptr);
    if (status.code != heif_error_Ok) throw Error(std::string("heif_init failed: ") + status.message);
    heif = h;  // the library stays loaded: decoders may run until the process exits
  });
  return heif;
}

}  // namespace imgpipe
