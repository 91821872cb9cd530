#include "image/jpeg_markers.h"

#include "image/byte_order.h"
#include "image/jpeg_format.h"

namespace imgpipe {
namespace {

using namespace jpeg_format;
constexpr int kTagOrientation = 0x0112;
constexpr int kTypeShort = 3;

}  // namespace

int ParseExifOrientation(std::string_view tiff) {
  if (!HasBytes(tiff, 0, 8)) return 1;
  bool big_endian;
  if (tiff.substr(0, 2) == "MM") {
    big_endian = true;
  } else if (tiff.substr(0, 2) == "II") {
    big_endian = false;
  } else {
    return 1;
  }
  if (LoadU16(tiff, 2, big_endian) != 42) return 1;
  uint64_t ifd = LoadU32(tiff, 4, big_endian);
  if (!HasBytes(tiff, ifd, 2)) return 1;
  uint32_t entries = LoadU16(tiff, ifd, big_endian);
  for (uint32_t i = 0; i < entries; ++i) {
    uint64_t entry = ifd + 2 + uint64_t{12} * i;
    if (!HasBytes(tiff, entry, 12)) return 1;
    if (LoadU16(tiff, entry, big_endian) != kTagOrientation) continue;
    if (LoadU16(tiff, entry + 2, big_endian) != kTypeShort) return 1;
    int value = static_cast<int>(LoadU16(tiff, entry + 8, big_endian));
    return value >= 1 && value <= 8 ? value : 1;
  }
  return 1;
}

bool HasEoiAfterScan(std::string_view bytes) {
  size_t scan = std::string_view::npos;  // where the first scan's data starts
  WalkJpegSegments(bytes, [&](int marker, std::string_view payload) {
    if (marker == kMarkerSos) {
      scan = static_cast<size_t>(payload.data() - bytes.data()) + payload.size();
    }
    return true;
  });
  if (scan == std::string_view::npos) return false;
  const size_t eoi = bytes.rfind("\xFF\xD9");
  return eoi != std::string_view::npos && eoi >= scan;
}

JpegMarkers ScanJpegMarkers(std::string_view bytes) {
  JpegMarkers result;
  bool have_exif = false;
  WalkJpegSegments(bytes, [&](int marker, std::string_view payload) {
    using namespace std::string_view_literals;
    if (marker == kMarkerApp1 && !have_exif && payload.substr(0, 6) == "Exif\0\0"sv) {
      have_exif = true;
      result.orientation = ParseExifOrientation(payload.substr(6));
    } else if (marker == kMarkerApp14 && payload.substr(0, 5) == "Adobe") {
      result.adobe = true;
    }
    return true;
  });
  return result;
}

}  // namespace imgpipe
