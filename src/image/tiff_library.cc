#include "image/tiff_library.h"

#include "util/shared_library.h"

namespace imgpipe {

const TiffLibrary& Tiff() {
  return LoadOnce<TiffLibrary>(
      "libtiff.so.6", "decodes TIFF (Debian: apt-get install libtiff6)",
      [](const SharedLibrary& library, TiffLibrary* t) {
        library.Load(&t->open_options_alloc, "TIFFOpenOptionsAlloc");
        library.Load(&t->open_options_free, "TIFFOpenOptionsFree");
        library.Load(&t->open_options_set_error_handler, "TIFFOpenOptionsSetErrorHandlerExtR");
        library.Load(&t->open_options_set_warning_handler, "TIFFOpenOptionsSetWarningHandlerExtR");
        library.Load(&t->open_options_set_max_single_mem_alloc,
                     "TIFFOpenOptionsSetMaxSingleMemAlloc");
        library.Load(&t->client_open, "TIFFClientOpenExt");
        library.Load(&t->close, "TIFFClose");
        library.Load(&t->get_field, "TIFFGetField");
        library.Load(&t->get_field_defaulted, "TIFFGetFieldDefaulted");
        library.Load(&t->set_field, "TIFFSetField");
        library.Load(&t->is_tiled, "TIFFIsTiled");
        library.Load(&t->compute_strip, "TIFFComputeStrip");
        library.Load(&t->compute_tile, "TIFFComputeTile");
        library.Load(&t->strip_size, "TIFFStripSize64");
        library.Load(&t->tile_size, "TIFFTileSize64");
        library.Load(&t->read_encoded_strip, "TIFFReadEncodedStrip");
        library.Load(&t->read_encoded_tile, "TIFFReadEncodedTile");
        library.Load(&t->rgba_image_begin, "TIFFRGBAImageBegin");
        library.Load(&t->rgba_image_get, "TIFFRGBAImageGet");
        library.Load(&t->rgba_image_end, "TIFFRGBAImageEnd");
      });
}

}  // namespace imgpipe
