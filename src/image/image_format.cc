#include "image/image_format.h"

#include <algorithm>
#include <cstdint>

namespace imgpipe {
namespace {

bool StartsWith(std::string_view bytes, std::string_view prefix) {
  return bytes.substr(0, prefix.size()) == prefix;
}

bool IsPnmWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

uint32_t U16Le(std::string_view bytes, size_t offset) {
  return static_cast<uint8_t>(bytes[offset]) | static_cast<uint8_t>(bytes[offset + 1]) << 8;
}

// ISO BMFF (HEIF, AVIF): a first box "ftyp" whose major or compatible brands name the
// format; kUnknown for other ftyp files (MP4, QuickTime).
ImageFormat DetectHeifBrand(std::string_view bytes) {
  if (bytes.size() < 16 || bytes.substr(4, 4) != "ftyp") return ImageFormat::kUnknown;
  uint64_t box = static_cast<uint64_t>(static_cast<uint8_t>(bytes[0])) << 24 |
                 static_cast<uint8_t>(bytes[1]) << 16 | static_cast<uint8_t>(bytes[2]) << 8 |
                 static_cast<uint8_t>(bytes[3]);
  if (box < 16 || box > 256) return ImageFormat::kUnknown;
  size_t end = std::min<size_t>(box, bytes.size());
  bool heif = false;
  for (size_t at = 8; at + 4 <= end; at += at == 8 ? 8 : 4) {  // skip minor_version
    std::string_view brand = bytes.substr(at, 4);
    if (brand == "avif" || brand == "avis") return ImageFormat::kAvif;
    if (brand == "heic" || brand == "heix" || brand == "heim" || brand == "heis" ||
        brand == "hevc" || brand == "hevx" || brand == "mif1" || brand == "msf1") {
      heif = true;
    }
  }
  return heif ? ImageFormat::kHeif : ImageFormat::kUnknown;
}

// TGA has no signature: every header field must hold a value the format allows (image
// type 1-3 or 9-11, a colour map exactly when the type is colour-mapped, 8-32 bits per
// pixel, no interleaving), and the bytes must hold at least the header, the ID field
// and the colour map (plus the pixels when uncompressed).
bool LooksLikeTga(std::string_view bytes) {
  if (bytes.size() < 18) return false;
  const uint32_t id_length = static_cast<uint8_t>(bytes[0]);
  const uint32_t map_type = static_cast<uint8_t>(bytes[1]);
  const uint32_t type = static_cast<uint8_t>(bytes[2]);
  const uint32_t map_length = U16Le(bytes, 5), map_depth = static_cast<uint8_t>(bytes[7]);
  const uint32_t width = U16Le(bytes, 12), height = U16Le(bytes, 14);
  const uint32_t depth = static_cast<uint8_t>(bytes[16]);
  const uint32_t descriptor = static_cast<uint8_t>(bytes[17]);
  const bool mapped = type == 1 || type == 9;
  if (type != 1 && type != 2 && type != 3 && type != 9 && type != 10 && type != 11) return false;
  if (map_type > 1 || (mapped && map_type != 1) || (descriptor & 0xC0) != 0) return false;
  if (width == 0 || height == 0) return false;
  if (depth != 8 && depth != 15 && depth != 16 && depth != 24 && depth != 32) return false;
  if (mapped && (depth != 8 || map_length == 0)) return false;
  uint64_t map_bytes = 0;
  if (map_type == 1) {
    if (map_depth != 15 && map_depth != 16 && map_depth != 24 && map_depth != 32) return false;
    map_bytes = uint64_t{map_length} * ((map_depth + 7) / 8);
  }
  uint64_t need = 18 + id_length + map_bytes;
  if (type <= 3) need += uint64_t{width} * height * ((depth + 7) / 8);
  return bytes.size() >= need + (type <= 3 ? 0 : 1);
}

// A DIB (a BMP without its file header): an info header of a size Pillow's DIB reader
// takes, 1 plane, a depth and (past the OS/2 header) a compression a BMP allows, a
// positive width and a non-zero height.
bool LooksLikeDib(std::string_view bytes) {
  if (bytes.size() < 16) return false;
  const uint32_t size = U16Le(bytes, 0) | U16Le(bytes, 2) << 16;
  if (size != 12 && size != 40 && size != 64 && size != 108 && size != 124) return false;
  if (bytes.size() < size) return false;
  const bool core = size == 12;
  const uint32_t planes = U16Le(bytes, core ? 8 : 12), bits = U16Le(bytes, core ? 10 : 14);
  const uint32_t width = core ? U16Le(bytes, 4) : U16Le(bytes, 4) | U16Le(bytes, 6) << 16;
  const uint32_t height = core ? U16Le(bytes, 6) : U16Le(bytes, 8) | U16Le(bytes, 10) << 16;
  const uint32_t compression = core ? 0 : U16Le(bytes, 16) | U16Le(bytes, 18) << 16;
  return planes == 1 && (bits == 1 || bits == 4 || bits == 8 || bits == 16 || bits == 24 ||
                         bits == 32) &&
         compression <= 3 && width >= 1 && width <= 0x7FFFFFFF && height != 0;
}

}  // namespace

ImageFormat DetectImageFormat(std::string_view bytes) {
  using namespace std::string_view_literals;
  if (StartsWith(bytes, "\xFF\xD8\xFF"sv)) return ImageFormat::kJpeg;
  if (StartsWith(bytes, "\x89PNG\r\n\x1A\n"sv)) return ImageFormat::kPng;
  // TIFF, and BigTIFF (43 for 42).
  if (StartsWith(bytes, "II*\0"sv) || StartsWith(bytes, "MM\0*"sv) ||
      StartsWith(bytes, "II+\0"sv) || StartsWith(bytes, "MM\0+"sv)) {
    return ImageFormat::kTiff;
  }
  if (StartsWith(bytes, "GIF87a"sv) || StartsWith(bytes, "GIF89a"sv)) return ImageFormat::kGif;
  if (StartsWith(bytes, "RIFF"sv) && bytes.size() >= 12 && bytes.substr(8, 4) == "WEBP"sv) {
    return ImageFormat::kWebp;
  }
  if (StartsWith(bytes, "\xFF\x4F\xFF\x51"sv) ||
      StartsWith(bytes, "\x00\x00\x00\x0C\x6A\x50\x20\x20"sv)) {
    return ImageFormat::kJpeg2000;
  }
  // "BM" then a 4-byte file size: two letters alone are too weak a signature for text
  // files, so require room for the 14-byte file header and a known DIB header size.
  if (StartsWith(bytes, "BM"sv) && bytes.size() >= 18) {
    uint32_t dib_size = static_cast<uint8_t>(bytes[14]) | static_cast<uint8_t>(bytes[15]) << 8 |
                        static_cast<uint8_t>(bytes[16]) << 16 |
                        static_cast<uint32_t>(static_cast<uint8_t>(bytes[17])) << 24;
    if (dib_size == 12 || dib_size == 16 || dib_size == 40 || dib_size == 52 || dib_size == 56 ||
        dib_size == 64 || dib_size == 108 || dib_size == 124) {
      return ImageFormat::kBmp;
    }
  }
  // P1..P6 (PBM, PGM, PPM, plain and raw) and P7 (PAM), followed by whitespace.
  if (bytes.size() >= 3 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '7' &&
      IsPnmWhitespace(bytes[2]) && !StartsWith(bytes, "P7 332"sv)) {  // XV thumbnail
    return ImageFormat::kPnm;
  }
  // ICO and CUR: reserved 0, type 1 (icon) or 2 (cursor), at least one entry.
  if (bytes.size() >= 22 && (StartsWith(bytes, "\0\0\1\0"sv) || StartsWith(bytes, "\0\0\2\0"sv)) &&
      U16Le(bytes, 4) >= 1) {
    return ImageFormat::kIco;
  }
  if (StartsWith(bytes, "8BPS\0\1"sv)) return ImageFormat::kPsd;
  // PCX (and DCX, its multi-page wrapper): manufacturer 10, version 0-5, RLE encoding,
  // 1, 2, 4 or 8 bits per plane.
  if (bytes.size() >= 128 && bytes[0] == 10 && static_cast<uint8_t>(bytes[1]) <= 5 &&
      bytes[2] == 1 && (bytes[3] == 1 || bytes[3] == 2 || bytes[3] == 4 || bytes[3] == 8)) {
    return ImageFormat::kPcx;
  }
  if (StartsWith(bytes, "\xB1\x68\xDE\x3A"sv)) return ImageFormat::kPcx;
  // SGI: magic 474, storage 0 (verbatim) or 1 (RLE), 1 or 2 bytes per channel.
  if (bytes.size() >= 4 && StartsWith(bytes, "\x01\xDA"sv) && static_cast<uint8_t>(bytes[2]) <= 1 &&
      (bytes[3] == 1 || bytes[3] == 2)) {
    return ImageFormat::kSgi;
  }
  if (StartsWith(bytes, "\x59\xA6\x6A\x95"sv)) return ImageFormat::kSunRaster;
  size_t text = bytes.find_first_not_of(" \t\r\n");
  if (text != std::string_view::npos && bytes.substr(text, 7) == "#define") {
    return ImageFormat::kXbm;
  }
  if (ImageFormat heif = DetectHeifBrand(bytes); heif != ImageFormat::kUnknown) return heif;
  if (StartsWith(bytes, "/* XPM */"sv)) return ImageFormat::kXpm;
  if (LooksLikeDib(bytes)) return ImageFormat::kDib;
  if (UnsupportedImageFormatName(bytes) == nullptr && LooksLikeTga(bytes)) return ImageFormat::kTga;
  return ImageFormat::kUnknown;
}

const char* UnsupportedImageFormatName(std::string_view bytes) {
  using namespace std::string_view_literals;
  struct Signature {
    size_t offset;
    std::string_view magic;
    const char* name;
  };
  static constexpr Signature kSignatures[] = {
      {0, "DDS "sv, "DDS texture"},
      {0, "icns"sv, "Apple icon (ICNS)"},
      {0, "BLP1"sv, "Blizzard texture (BLP)"},
      {0, "BLP2"sv, "Blizzard texture (BLP)"},
      {0, "Image type:"sv, "IFUNC image (IM)"},
      {0, "%!PS-Adobe"sv, "Encapsulated PostScript (EPS)"},
      {0, "\xC5\xD0\xD3\xC6"sv, "Encapsulated PostScript (EPS)"},
      {0, "%PDF-"sv, "PDF document"},
      {0, "DanM"sv, "Microsoft Paint (MSP)"},
      {0, "LinS"sv, "Microsoft Paint (MSP)"},
      {0, "SIMPLE  ="sv, "FITS"},
      {0, "\xFF\x0A"sv, "JPEG XL"},
      {0, "\0\0\0\x0CJXL \r\n\x87\n"sv, "JPEG XL"},
      {0, "II\xBC"sv, "JPEG XR"},
      {0, "qoif"sv, "QOI"},
      {0, "\x76\x2F\x31\x01"sv, "OpenEXR"},
      {0, "#?RADIANCE"sv, "Radiance HDR"},
      {0, "#?RGBE"sv, "Radiance HDR"},
      {0, "\xD7\xCD\xC6\x9A"sv, "Windows metafile (WMF)"},
      {40, " EMF"sv, "Windows enhanced metafile (EMF)"},
      {20, "GIMP"sv, "GIMP brush (GBR)"},
      {0, "FTEX"sv, "FTEX texture"},
      {0, "\x80\xE8\0\0"sv, "Pixar image"},
      {0, "BUFR"sv, "BUFR"},
      {0, "GRIB"sv, "GRIB"},
      {0, "\x89HDF\r\n\x1A\n"sv, "HDF5"},
      {0, "P7 332"sv, "XV thumbnail"},
      {0, "8BPS\0\2"sv, "Photoshop large document (PSB)"},
      {0, "<svg"sv, "SVG"},
      {4, "\x11\xAF"sv, "Autodesk animation (FLI)"},
      {4, "\x12\xAF"sv, "Autodesk animation (FLC)"},
  };
  for (const Signature& s : kSignatures) {
    if (s.offset <= bytes.size() && StartsWith(bytes.substr(s.offset), s.magic)) {
      // FLI/FLC: only a 2-byte magic, so also the 128-byte header's room and a depth of 8.
      if (s.offset == 4 && (bytes.size() < 128 || bytes[12] != 8)) continue;
      return s.name;
    }
  }
  return nullptr;
}

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "jpeg";
    case ImageFormat::kPng: return "png";
    case ImageFormat::kBmp: return "bmp";
    case ImageFormat::kTiff: return "tiff";
    case ImageFormat::kPnm: return "pnm";
    case ImageFormat::kGif: return "gif";
    case ImageFormat::kWebp: return "webp";
    case ImageFormat::kJpeg2000: return "jpeg2000";
    case ImageFormat::kTga: return "tga";
    case ImageFormat::kIco: return "ico";
    case ImageFormat::kPsd: return "psd";
    case ImageFormat::kPcx: return "pcx";
    case ImageFormat::kSgi: return "sgi";
    case ImageFormat::kSunRaster: return "sun-raster";
    case ImageFormat::kXbm: return "xbm";
    case ImageFormat::kHeif: return "heif";
    case ImageFormat::kAvif: return "avif";
    case ImageFormat::kDib: return "dib";
    case ImageFormat::kXpm: return "xpm";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

}  // namespace imgpipe
