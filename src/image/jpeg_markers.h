// What imgpipe needs from a JPEG's marker segments before the first scan, beyond what
// libjpeg reports: the EXIF orientation (APP1) and the Adobe marker (APP14).
#pragma once

#include <cstddef>
#include <string_view>

#include "image/byte_order.h"

namespace imgpipe {

// Walks a JPEG's marker segments from after SOI: calls visit(marker, payload) for each
// (`payload`: the bytes after the length field, a view into `bytes`), SOS's too, and
// ends after SOS, at EOI, when visit returns false, or at bytes that are not a whole
// segment. Fill bytes (0xFF) before a marker and standalone markers (TEM, RSTn, SOI)
// are skipped, and so are extraneous bytes before a marker, as libjpeg (with a warning
// it accepts, IsFatalJpegWarning) and Pillow skip them. Never throws.
template <typename Visit>
void WalkJpegSegments(std::string_view bytes, Visit visit) {
  constexpr int kSos = 0xDA, kEoi = 0xD9;
  size_t pos = 2;  // after SOI
  while (pos < bytes.size()) {
    // 1. A marker: any extraneous bytes, one or more 0xFF fill bytes, then the code.
    while (pos < bytes.size() && LoadU8(bytes, pos) != 0xFF) ++pos;
    while (pos < bytes.size() && LoadU8(bytes, pos) == 0xFF) ++pos;
    if (pos >= bytes.size()) return;
    const int marker = static_cast<int>(LoadU8(bytes, pos++));
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // standalone
    if (marker == kEoi) return;
    // 2. A segment: big-endian length (counting itself), then the payload.
    if (!HasBytes(bytes, pos, 2)) return;
    const size_t length = LoadU16(bytes, pos, true);
    if (length < 2 || !HasBytes(bytes, pos, length)) return;
    if (!visit(marker, bytes.substr(pos + 2, length - 2)) || marker == kSos) return;
    pos += length;
  }
}

// Whether an EOI marker (0xFF 0xD9) follows the first SOS segment of `bytes`. A JPEG
// cut short has none, and libjpeg reports that only once it reads that far (a crop
// decode may stop above it); entropy-coded data never holds the pair (0xFF is followed
// by 0x00 there, or by 0xD0-0xD7 for a restart marker). Searches from the end, where the
// EOI is. Never throws.
bool HasEoiAfterScan(std::string_view bytes);

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
