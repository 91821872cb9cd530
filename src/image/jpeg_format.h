// JPEG marker codes (ITU-T T.81, table B.1; APP1/EXIF and APP14/Adobe by their
// specifications): the byte after 0xFF that names a segment.
#pragma once

namespace imgpipe::jpeg_format {

constexpr int kMarkerSof0 = 0xC0;  // start of frame, baseline
constexpr int kMarkerSof1 = 0xC1;  // start of frame, extended sequential, Huffman
constexpr int kMarkerRst0 = 0xD0;  // restart markers RST0..RST7: 0xD0..0xD7
constexpr int kMarkerEoi = 0xD9;   // end of image
constexpr int kMarkerSos = 0xDA;   // start of scan
constexpr int kMarkerDri = 0xDD;   // define restart interval
constexpr int kMarkerApp1 = 0xE1;  // EXIF
constexpr int kMarkerApp14 = 0xEE; // Adobe (colour transform)

}  // namespace imgpipe::jpeg_format
