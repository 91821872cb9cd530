// libtiff, loaded with dlopen (libtiff.so.6) at the first TIFF file, so that a process
// that never reads one never maps it nor its codecs' libraries (libjpeg, libwebp,
// libzstd, liblzma, libjbig, libdeflate). Only tiff_decoder.cc calls libtiff, through
// this table.
#pragma once

#include <tiffio.h>

namespace imgpipe {

struct TiffLibrary {
  decltype(&TIFFOpenOptionsAlloc) open_options_alloc = nullptr;
  decltype(&TIFFOpenOptionsFree) open_options_free = nullptr;
  decltype(&TIFFOpenOptionsSetErrorHandlerExtR) open_options_set_error_handler = nullptr;
  decltype(&TIFFOpenOptionsSetWarningHandlerExtR) open_options_set_warning_handler = nullptr;
  decltype(&TIFFOpenOptionsSetMaxSingleMemAlloc) open_options_set_max_single_mem_alloc = nullptr;
  decltype(&TIFFClientOpenExt) client_open = nullptr;
  decltype(&TIFFClose) close = nullptr;
  decltype(&TIFFGetField) get_field = nullptr;
  decltype(&TIFFGetFieldDefaulted) get_field_defaulted = nullptr;
  decltype(&TIFFSetField) set_field = nullptr;
  decltype(&TIFFIsTiled) is_tiled = nullptr;
  decltype(&TIFFComputeStrip) compute_strip = nullptr;
  decltype(&TIFFComputeTile) compute_tile = nullptr;
  decltype(&TIFFStripSize64) strip_size = nullptr;
  decltype(&TIFFTileSize64) tile_size = nullptr;
  decltype(&TIFFReadEncodedStrip) read_encoded_strip = nullptr;
  decltype(&TIFFReadEncodedTile) read_encoded_tile = nullptr;
  decltype(&TIFFRGBAImageBegin) rgba_image_begin = nullptr;
  decltype(&TIFFRGBAImageGet) rgba_image_get = nullptr;
  decltype(&TIFFRGBAImageEnd) rgba_image_end = nullptr;
};

// libtiff's functions, loaded once per process (thread-safe; later calls return the
// same table). Throws Error naming libtiff.so.6 and why it did not load, again at each
// call.
const TiffLibrary& Tiff();

}  // namespace imgpipe
