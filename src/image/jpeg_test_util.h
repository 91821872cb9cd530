// Test helper: what libjpeg reads from a JPEG's header about its layout (restart
// interval, progressive), for tests of AddJpegRestartMarkers and of its users.
#pragma once

#include <string>
#include <string_view>

#include "image/jpeg_lib.h"
#include "util/error.h"

namespace imgpipe {

// The restart interval (DRI, in MCUs; 0: none) and progressive flag of a JPEG.
struct JpegLayout {
  int restart_interval = 0;
  bool progressive = false;
};

// Reads `jpeg`'s header with libjpeg; throws Error with libjpeg's message if it cannot.
inline JpegLayout JpegLayoutOf(std::string_view jpeg) {
  LibjpegDecompressor d;
  if (setjmp(d.errors.jump) != 0) throw Error(std::string("libjpeg: ") + d.errors.message);
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(jpeg.data()), jpeg.size());
  jpeg_read_header(&d.cinfo, TRUE);
  return {static_cast<int>(d.cinfo.restart_interval), d.cinfo.progressive_mode != 0};
}

}  // namespace imgpipe
