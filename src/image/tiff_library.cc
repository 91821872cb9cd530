#include "image/tiff_library.h"

#include <mutex>

#include "util/shared_library.h"

namespace imgpipe {

const TiffLibrary& Tiff() {
  // call_once: a throw leaves the flag unset, so the next call tries again.
  static std::once_flag once;
  static TiffLibrary tiff;  // written once, inside call_once
  std::call_once(once, [] {
    const SharedLibrary lib("libtiff.so.6", "decodes TIFF (Debian: apt-get install libtiff6)");
    TiffLibrary t;
    lib.Load(&t.open_options_alloc, "TIFFOpenOptionsAlloc");
    lib.Load(&t.open_options_free, "TIFFOpenOptionsFree");
    lib.Load(&t.open_options_set_error_handler, "TIFFOpenOptionsSetErrorHandlerExtR");
    lib.Load(&t.open_options_set_warning_handler, "TIFFOpenOptionsSetWarningHandlerExtR");
    lib.Load(&t.open_options_set_max_single_mem_alloc, "TIFFOpenOptionsSetMaxSingleMemAlloc");
    lib.Load(&t.client_open, "TIFFClientOpenExt");
    lib.Load(&t.close, "TIFFClose");
    lib.Load(&t.get_field, "TIFFGetField");
    lib.Load(&t.get_field_defaulted, "TIFFGetFieldDefaulted");
    lib.Load(&t.set_field, "TIFFSetField");
    lib.Load(&t.is_tiled, "TIFFIsTiled");
    lib.Load(&t.compute_strip, "TIFFComputeStrip");
    lib.Load(&t.compute_tile, "TIFFComputeTile");
    lib.Load(&t.strip_size, "TIFFStripSize64");
    lib.Load(&t.tile_size, "TIFFTileSize64");
    lib.Load(&t.read_encoded_strip, "TIFFReadEncodedStrip");
    lib.Load(&t.read_encoded_tile, "TIFFReadEncodedTile");
    lib.Load(&t.rgba_image_begin, "TIFFRGBAImageBegin");
    lib.Load(&t.rgba_image_get, "TIFFRGBAImageGet");
    lib.Load(&t.rgba_image_end, "TIFFRGBAImageEnd");
    tiff = t;  // the library stays loaded: decoders may run until the process exits
  });
  return tiff;
}

}  // namespace imgpipe
