#include "image/pcx_decoder.h"

#include "image/byte_order.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

struct PcxHeader {
  uint64_t start = 0;  // of the PCX file within `bytes` (DCX: its first page)
  uint32_t version = 0, bits = 0, planes = 0, stride = 0;
  int64_t width = 0, height = 0;
};

// 1. The header (of the first page of a DCX: magic, then page offsets).
PcxHeader ParseHeader(std::string_view bytes, const std::string& path) {
  PcxHeader h;
  if (LoadU8(bytes, 0) == 0xB1) {
    RequireBytes(bytes, 0, 8, path, "DCX page table");
    h.start = LoadU32(bytes, 4, false);
  }
  RequireBytes(bytes, h.start, 128, path, "PCX header");
  std::string_view p = bytes.substr(h.start);
  if (LoadU8(p, 0) != 10 || LoadU8(p, 2) != 1) {
    throw DataError(path, h.start, "invalid PCX: bad manufacturer or encoding byte");
  }
  h.version = LoadU8(p, 1);
  h.bits = LoadU8(p, 3);
  h.width = int64_t{LoadU16(p, 8, false)} - LoadU16(p, 4, false) + 1;
  h.height = int64_t{LoadU16(p, 10, false)} - LoadU16(p, 6, false) + 1;
  h.planes = LoadU8(p, 65);
  h.stride = LoadU16(p, 66, false);
  const bool layout_ok = (h.bits == 1 && h.planes >= 1 && h.planes <= 4) ||
                         ((h.bits == 2 || h.bits == 4) && h.planes == 1) ||
                         (h.bits == 8 && (h.planes == 1 || h.planes == 3 || h.planes == 4));
  if (!layout_ok) {
    throw DataError(path, h.start + 3, "unsupported PCX: " + std::to_string(h.bits) +
                                           " bits x " + std::to_string(h.planes) + " planes");
  }
  if (h.width < 1 || h.height < 1) {
    throw DataError(path, h.start + 4, "invalid PCX: window of " + std::to_string(h.width) +
                                           "x" + std::to_string(h.height) + " pixels");
  }
  if (uint64_t{h.stride} * 8 < uint64_t(h.width) * h.bits) {
    throw DataError(path, h.start + 66, "invalid PCX: " + std::to_string(h.stride) +
                                            " bytes per line for " + std::to_string(h.width) +
                                            " pixels");
  }
  return h;
}

// 2. The RLE stream: a byte 0xC0 | n repeats the next byte n times; any other byte is
// itself. Runs may cross lines. Returns stride x planes x height bytes.
std::vector<uint8_t> Unpack(std::string_view bytes, const PcxHeader& h, const std::string& path) {
  // Two bytes code at most 63: fewer input bytes than that allows cannot fill the
  // image, so that is refused before the buffer is allocated.
  const uint64_t size = uint64_t{h.stride} * h.planes * h.height;
  if (size > (bytes.size() - h.start - 128) * 32) {
    throw DataError(path, bytes.size(), "truncated PCX data: " + std::to_string(size) +
                                            " bytes cannot come from the " +
                                            std::to_string(bytes.size() - h.start - 128) +
                                            " bytes left");
  }
  std::vector<uint8_t> out(size);
  size_t at = h.start + 128, filled = 0;
  while (filled < out.size()) {
    if (at >= bytes.size()) {
      throw DataError(path, bytes.size(), "truncated PCX data: " + std::to_string(filled) +
                                              " of " + std::to_string(out.size()) + " bytes");
    }
    uint32_t b = LoadU8(bytes, at++), n = 1;
    if ((b & 0xC0) == 0xC0) {
      n = b & 0x3F;
      if (at >= bytes.size()) continue;  // reported above
      b = LoadU8(bytes, at++);
    }
    for (; n > 0 && filled < out.size(); --n) out[filled++] = static_cast<uint8_t>(b);
  }
  return out;
}

// 3. The palette: 8-bit single-plane images use the 256 colours after a 12 byte at the
// end of the file (gray levels without one; Pillow's rule, version 5 or not); the rest
// use the header's 16.
std::vector<uint8_t> Palette(std::string_view bytes, const PcxHeader& h) {
  std::vector<uint8_t> palette(768);
  if (h.bits == 8) {
    const size_t tail = bytes.size() - 769;
    const bool has = bytes.size() >= h.start + 128 + 769 && LoadU8(bytes, tail) == 12;
    for (size_t i = 0; i < 768; ++i) {
      palette[i] = has ? static_cast<uint8_t>(LoadU8(bytes, tail + 1 + i)) : i / 3;
    }
  } else {
    for (size_t i = 0; i < 48; ++i) palette[i] = LoadU8(bytes, h.start + 16 + i);
  }
  return palette;
}

}  // namespace

ImageInfo ReadPcxInfo(std::string_view bytes, const std::string& path) {
  PcxHeader h = ParseHeader(bytes, path);
  return MakeHeaderInfo(ImageFormat::kPcx, h.width, h.height, h.bits == 8 && h.planes >= 3 ? 3 : 1,
                        path);
}

Image DecodePcx(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  PcxHeader h = ParseHeader(bytes, path);
  // The data first: Unpack refuses a header that asks for more than the file can code.
  std::vector<uint8_t> data = Unpack(bytes, h, path);
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "PCX");
  std::vector<uint8_t> palette = Palette(bytes, h);
  const size_t line = size_t{h.stride} * h.planes;
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* in = data.data() + line * y;
    uint8_t* out = image.row(y);
    for (int x = 0; x < image.width; ++x, out += 3) {
      if (h.bits == 8 && h.planes >= 3) {
        for (int c = 0; c < 3; ++c) out[c] = in[size_t{h.stride} * c + x];
        continue;
      }
      uint32_t index = 0;
      if (h.bits == 1) {
        for (uint32_t p = 0; p < h.planes; ++p) {
          index |= ((in[size_t{h.stride} * p + x / 8] >> (7 - x % 8)) & 1u) << p;
        }
      } else {
        const uint32_t per_byte = 8 / h.bits, shift = 8 - h.bits * (1 + x % per_byte);
        index = (in[x / per_byte] >> shift) & ((1u << h.bits) - 1);
      }
      if (h.bits == 1 && h.planes == 1) {
        out[0] = out[1] = out[2] = index ? 255 : 0;
      } else {
        for (int c = 0; c < 3; ++c) out[c] = palette[3 * index + c];
      }
    }
  }
  return image;
}

}  // namespace imgpipe
