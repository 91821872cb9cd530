#include "image/dib_decoder.h"

#include "image/byte_order.h"
#include "image/codec.h"
#include "image/decoder_util.h"
#include "image/image_header.h"
#include "util/error.h"

namespace imgpipe {

std::string DibAsBmp(std::string_view dib, bool halve_height, uint64_t offset,
                     const std::string& path, const char* kind) {
  const std::string header_what = std::string(kind) + " bitmap header";
  RequireBytes(dib, 0, 16, path, header_what);
  const uint32_t header = LoadU32(dib, 0, false);
  if (header != 12 && header != 40 && header != 52 && header != 56 && header != 64 &&
      header != 108 && header != 124) {
    throw DataError(path, offset, std::string("invalid ") + kind + ": bitmap header of " +
                                      std::to_string(header) + " bytes");
  }
  RequireBytes(dib, 0, header, path, header_what);
  std::string bmp(14, '\0');
  bmp.append(dib);
  auto put32 = [&](size_t at, uint64_t v) {
    for (int k = 0; k < 4; ++k) bmp[at + k] = static_cast<char>(v >> (8 * k) & 0xFF);
  };
  const int divisor = halve_height ? 2 : 1;
  uint32_t bits, colors = 0, compression = 0, entry_bytes = 4;
  if (header == 12) {
    const uint32_t height = LoadU16(dib, 6, false) / divisor;
    bmp[14 + 6] = static_cast<char>(height & 0xFF);
    bmp[14 + 7] = static_cast<char>(height >> 8);
    bits = LoadU16(dib, 10, false);
    entry_bytes = 3;
  } else {
    const int32_t height = static_cast<int32_t>(LoadU32(dib, 8, false)) / divisor;
    put32(14 + 8, static_cast<uint32_t>(height));
    bits = LoadU16(dib, 14, false);
    compression = LoadU32(dib, 16, false);
    colors = LoadU32(dib, 32, false);
  }
  if (bits > 8) colors = 0;
  if (colors == 0 && bits <= 8) colors = 1u << bits;
  if (colors > 256) {
    throw DataError(path, offset + 32, std::string("invalid ") + kind + ": palette of " +
                                           std::to_string(colors) + " colours");
  }
  uint64_t masks = header == 40 && compression == 3 ? 12 : 0;
  bmp[0] = 'B';
  bmp[1] = 'M';
  put32(2, bmp.size());
  put32(10, 14 + header + masks + uint64_t{colors} * entry_bytes);
  if (DetectImageFormat(bmp) != ImageFormat::kBmp) {
    throw DataError(path, offset,
                    std::string("invalid ") + kind + ": the image is not a BMP bitmap");
  }
  return bmp;
}

ImageInfo ReadDibInfo(std::string_view bytes, const std::string& path) {
  ImageInfo info =
      ParseImageHeader(ImageFormat::kBmp, DibAsBmp(bytes, false, 0, path, "DIB"), path);
  info.format = ImageFormat::kDib;
  return info;
}

Image DecodeDib(std::string_view bytes, const std::string& path, int channels,
                uint64_t max_pixels) {
  DecodeOptions options;
  options.channels = channels;
  options.max_pixels = max_pixels;
  return DecodeImage(DibAsBmp(bytes, false, 0, path, "DIB"), path, options);
}

}  // namespace imgpipe
