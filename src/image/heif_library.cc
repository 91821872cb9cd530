#include "image/heif_library.h"

#include <string>

#include "util/error.h"
#include "util/shared_library.h"

namespace imgpipe {

const HeifLibrary& Heif() {
  return LoadOnce<HeifLibrary>(
      "libheif.so.1", "decodes HEIF and AVIF (Debian: apt-get install libheif1)",
      [](const SharedLibrary& library, HeifLibrary* t) {
        library.Load(&t->context_alloc, "heif_context_alloc");
        library.Load(&t->context_free, "heif_context_free");
        library.Load(&t->context_read_from_memory_without_copy,
                     "heif_context_read_from_memory_without_copy");
        library.Load(&t->context_get_primary_image_handle, "heif_context_get_primary_image_handle");
        library.Load(&t->image_handle_release, "heif_image_handle_release");
        library.Load(&t->image_handle_get_width, "heif_image_handle_get_width");
        library.Load(&t->image_handle_get_height, "heif_image_handle_get_height");
        library.Load(&t->image_handle_has_alpha_channel, "heif_image_handle_has_alpha_channel");
        library.Load(&t->decode_image, "heif_decode_image");
        library.Load(&t->image_release, "heif_image_release");
        library.Load(&t->image_get_plane_readonly, "heif_image_get_plane_readonly");
        library.Load(&t->image_get_width, "heif_image_get_width");
        library.Load(&t->image_get_height, "heif_image_get_height");
        const heif_error status = library.Function<decltype(&heif_init)>("heif_init")(nullptr);
        if (status.code != heif_error_Ok)
          throw Error(std::string("heif_init failed: ") + status.message);
      });
}

}  // namespace imgpipe
