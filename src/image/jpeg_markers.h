// What imgpipe needs from a JPEG's marker segments before the first scan, beyond what
// libjpeg reports: the EXIF orientation (APP1) and the Adobe marker (APP14).
#pragma once

#include <string_view>

namespace imgpipe {

struct JpegMarkers {
  int orientation = 1;  // EXIF orientation 1..8; 1 when absent or malformed
  bool adobe = false;   // an Adobe APP14 segment: CMYK samples are stored inverted
};

// Walks the marker segments from SOI to the first SOS (or the end of the bytes).
// Never throws: malformed segments end the walk, keeping what was found.
JpegMarkers ScanJpegMarkers(std::string_view bytes);

// The orientation tag (0x0112) of IFD0 in `tiff`, an EXIF TIFF structure (the APP1
// payload after "Exif\0\0"); 1 when absent, malformed or out of 1..8.
int ParseExifOrientation(std::string_view tiff);

}  // namespace imgpipe
