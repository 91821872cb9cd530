#include "image/jpeg_markers.h"

#include <gtest/gtest.h>

#include <string>

namespace imgpipe {
namespace {

using namespace std::string_literals;

// An EXIF TIFF structure whose IFD0 holds `entries` entries, the orientation last.
std::string ExifTiff(bool big_endian, int orientation, int type = 3) {
  auto u16 = [&](int v) {
    return big_endian ? std::string{char(v >> 8), char(v)} : std::string{char(v), char(v >> 8)};
  };
  auto u32 = [&](uint32_t v) {
    return big_endian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16);
  };
  std::string ifd = u16(2);
  ifd += u16(0x010F) + u16(2) + u32(4) + "Cam\0"s;  // Make: "Cam"
  ifd += u16(0x0112) + u16(type) + u32(1) + u16(orientation) + u16(0);
  return (big_endian ? "MM"s : "II"s) + u16(42) + u32(8) + ifd + u32(0);
}

std::string Segment(int marker, const std::string& payload) {
  size_t length = payload.size() + 2;
  return "\xFF"s + char(marker) + char(length >> 8) + char(length & 0xFF) + payload;
}

TEST(JpegMarkersTest, ParsesOrientationInBothByteOrders) {
  for (int orientation = 1; orientation <= 8; ++orientation) {
    EXPECT_EQ(ParseExifOrientation(ExifTiff(true, orientation)), orientation);
    EXPECT_EQ(ParseExifOrientation(ExifTiff(false, orientation)), orientation);
  }
}

TEST(JpegMarkersTest, MalformedOrientationIsOne) {
  EXPECT_EQ(ParseExifOrientation(ExifTiff(true, 9)), 1);
  EXPECT_EQ(ParseExifOrientation(ExifTiff(true, 0)), 1);
  EXPECT_EQ(ParseExifOrientation(ExifTiff(true, 6, /*type=*/4)), 1);  // LONG, not SHORT
  EXPECT_EQ(ParseExifOrientation(ExifTiff(true, 6).substr(0, 20)), 1);  // cut in the IFD
  EXPECT_EQ(ParseExifOrientation("XX\0*\0\0\0\x08"s), 1);
  EXPECT_EQ(ParseExifOrientation(""), 1);
}

TEST(JpegMarkersTest, ScansSegmentsUpToTheFirstScan) {
  std::string jfif = Segment(0xE0, "JFIF\0\x01\x01\0\0\x01\0\x01\0\0"s);
  std::string exif = Segment(0xE1, "Exif\0\0"s + ExifTiff(false, 8));
  std::string xmp = Segment(0xE1, "http://ns.adobe.com/xap/1.0/\0<x/>"s);
  std::string adobe = Segment(0xEE, "Adobe\0\x64\0\0\0\0\x02"s);
  std::string sos = "\xFF\xDA\0\x08\x01\x01\0\0\x3F\0"s;
  std::string soi = "\xFF\xD8"s;

  JpegMarkers m = ScanJpegMarkers(soi + jfif + xmp + exif + adobe + sos);
  EXPECT_EQ(m.orientation, 8);
  EXPECT_TRUE(m.adobe);

  m = ScanJpegMarkers(soi + jfif + sos + exif);  // after SOS: entropy data, not read
  EXPECT_EQ(m.orientation, 1);
  EXPECT_FALSE(m.adobe);

  // Fill bytes before a marker are allowed; a segment running past the end stops the walk.
  m = ScanJpegMarkers(soi + "\xFF\xFF"s + exif);
  EXPECT_EQ(m.orientation, 8);
  m = ScanJpegMarkers(soi + exif.substr(0, exif.size() - 3));
  EXPECT_EQ(m.orientation, 1);
  // Extraneous bytes before a marker are skipped, as libjpeg and Pillow skip them.
  m = ScanJpegMarkers(soi + "garbage"s + exif);
  EXPECT_EQ(m.orientation, 8);
  m = ScanJpegMarkers(soi + "garbage"s);
  EXPECT_EQ(m.orientation, 1);
  m = ScanJpegMarkers(soi);
  EXPECT_EQ(m.orientation, 1);
}

}  // namespace
}  // namespace imgpipe
