#include "image/bmp_rle_decoder.h"

#include <array>
#include <vector>

#include "image/byte_order.h"
#include "image/decode_warnings.h"
#include "image/decoder_util.h"
#include "util/error.h"

namespace imgpipe {
namespace {

constexpr uint32_t kRle8 = 1, kRle4 = 2;

// 1. The headers: the file header (pixel data offset at 10) and an info header of at
// least 40 bytes (width 18, height 22, bits 28, compression 30, colours used 46).
struct RleBmpHeader {
  int64_t width = 0, height = 0;
  bool top_down = false, rle4 = false;
  uint64_t palette_offset = 0, colors = 0, data_offset = 0;
};

RleBmpHeader ParseHeader(std::string_view bytes, const std::string& path) {
  RequireBytes(bytes, 0, 50, path, "BMP header");
  RleBmpHeader h;
  const uint32_t header_size = LoadU32(bytes, 14, false);
  h.width = static_cast<int32_t>(LoadU32(bytes, 18, false));
  h.height = static_cast<int32_t>(LoadU32(bytes, 22, false));
  h.top_down = h.height < 0;
  if (h.top_down) h.height = -h.height;
  const uint32_t bits = LoadU16(bytes, 28, false);
  h.rle4 = LoadU32(bytes, 30, false) == kRle4;
  if (bits > 8) {
    throw DataError(path, 28, std::string("unsupported BMP: ") + (h.rle4 ? "RLE4" : "RLE8") +
                                  " compression at " + std::to_string(bits) + " bits per pixel");
  }
  h.colors = LoadU32(bytes, 46, false);
  if (h.colors == 0) h.colors = uint64_t{1} << bits;
  if (h.colors > 256) {
    throw DataError(path, 46, "invalid BMP: palette of " + std::to_string(h.colors) + " colours");
  }
  h.palette_offset = 14 + uint64_t{header_size};
  RequireBytes(bytes, h.palette_offset, 4 * h.colors, path, "BMP palette");
  // Pillow's repair of an offset that points at the palette instead of past it.
  h.data_offset = LoadU32(bytes, 10, false);
  if (h.data_offset == h.palette_offset) h.data_offset += 4 * h.colors;
  if (h.data_offset >= bytes.size()) {
    throw DataError(path, 10, "truncated BMP: the pixel data at byte " +
                                  std::to_string(h.data_offset) + " lies past the end of the file");
  }
  return h;
}

// 2. The codes, into width x height indices in storage order (Pillow's linear buffer:
// `position` pixels written so far, `x` its idea of the column).
class RleIndexDecoder {
 public:
  RleIndexDecoder(std::string_view bytes, const RleBmpHeader& h, const std::string& path)
      : bytes_(bytes), path_(path), at_(h.data_offset), rle4_(h.rle4), width_(h.width),
        total_(static_cast<uint64_t>(h.width) * h.height), indices_(total_, 0) {}

  // Decodes every code up to the end of bitmap or the image's end; throws DataError where
  // the data ends before either.
  void Run() {
    while (position_ < total_) {
      if (!HasBytes(bytes_, at_, 2)) return Ended();
      const uint32_t count = LoadU8(bytes_, at_), code = LoadU8(bytes_, at_ + 1);
      at_ += 2;
      if (count > 0) {
        EncodedRun(count, code);
      } else if (code == 0) {  // end of line
        position_ = (position_ + width_ - 1) / width_ * width_;
        x_ = 0;
      } else if (code == 1) {  // end of bitmap
        return;
      } else if (code == 2) {
        if (!Delta()) return Ended();
      } else if (!AbsoluteRun(code)) {
        return Ended();
      }
    }
  }

  const std::vector<uint8_t>& indices() const { return indices_; }
  int repairs() const { return repairs_; }
  const std::string& first_repair() const { return first_repair_; }

 private:
  void Repair(uint64_t at, const std::string& what) {
    if (repairs_++ == 0) {
      first_repair_ = "BMP run-length code at byte " + std::to_string(at) + ": " + what;
    }
  }

  // Data that ends before the image is whole, without the end-of-bitmap code: truncated,
  // as Pillow refuses it ("not enough image data").
  [[noreturn]] void Ended() {
    throw DataError(path_, bytes_.size(),
                    "truncated BMP: the run-length data ends before the image is whole "
                    "(no end-of-bitmap code)");
  }

  // Writes `index` at the position, unless it is past the image's end; moves on.
  void Put(uint8_t index) {
    if (position_ < total_) indices_[position_] = index;
    ++position_;
  }

  void CheckImageEnd(uint64_t pixels) {
    if (position_ + pixels > total_) Repair(at_ - 2, "a run past the image's end (dropped)");
  }

  void EncodedRun(uint64_t count, uint32_t code) {
    uint64_t n = count;
    if (x_ + n > width_) {
      n = x_ < width_ ? width_ - x_ : 0;
      Repair(at_ - 2, "a run of " + std::to_string(count) + " pixels past its row's end (cut)");
    }
    CheckImageEnd(n);
    for (uint64_t i = 0; i < n; ++i) {
      Put(static_cast<uint8_t>(!rle4_ ? code : i % 2 == 0 ? code >> 4 : code & 0x0F));
    }
    x_ += n;
  }

  // The format's delta: 2 bytes, the pixels passed left 0. False where the data ends.
  bool Delta() {
    if (!HasBytes(bytes_, at_, 2)) return false;
    const uint64_t skip = LoadU8(bytes_, at_) + uint64_t{LoadU8(bytes_, at_ + 1)} * width_;
    at_ += 2;
    if (position_ + skip > total_) Repair(at_ - 4, "a delta past the image's end");
    position_ += skip;
    x_ = position_ % width_;
    return true;
  }

  // `n` indices as they are (not cut at the row's end), then the padding to 16 bits.
  // False where the data ends inside them.
  bool AbsoluteRun(uint64_t n) {
    const uint64_t need = rle4_ ? (n + 1) / 2 : n;
    const uint64_t have = std::min<uint64_t>(need, bytes_.size() - at_);
    if (x_ + n > width_) {
      Repair(at_ - 2, "an absolute run of " + std::to_string(n) +
                          " pixels past its row's end (continued on the next row)");
    }
    CheckImageEnd(n);
    for (uint64_t i = 0; i < n && i < (rle4_ ? 2 * have : have); ++i) {
      const uint32_t byte = LoadU8(bytes_, at_ + (rle4_ ? i / 2 : i));
      Put(static_cast<uint8_t>(!rle4_ ? byte : i % 2 == 0 ? byte >> 4 : byte & 0x0F));
    }
    at_ += have;
    if (have < need) return false;
    x_ += n;
    if (at_ % 2 != 0) ++at_;
    return true;
  }

  std::string_view bytes_;
  const std::string& path_;
  uint64_t at_;
  const bool rle4_;
  const uint64_t width_, total_;
  std::vector<uint8_t> indices_;
  uint64_t position_ = 0, x_ = 0;
  int repairs_ = 0;
  std::string first_repair_;
};

// 3. The palette: the file's entries (B, G, R, reserved), past them the gray ramp.
std::array<uint8_t, 768> ReadPalette(std::string_view bytes, const RleBmpHeader& h) {
  std::array<uint8_t, 768> rgb;
  for (uint32_t i = 0; i < 256; ++i) {
    for (int k = 0; k < 3; ++k) {
      rgb[3 * i + k] = i < h.colors ? LoadU8(bytes, h.palette_offset + 4 * i + 2 - k)
                                    : static_cast<uint8_t>(i);
    }
  }
  return rgb;
}

}  // namespace

bool IsRleBmp(std::string_view bytes) {
  if (!HasBytes(bytes, 0, 34) || LoadU32(bytes, 14, false) < 40) return false;
  const uint32_t compression = LoadU32(bytes, 30, false);
  return compression == kRle8 || compression == kRle4;
}

Image DecodeBmpRle(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  const RleBmpHeader h = ParseHeader(bytes, path);
  Image image = AllocateImage(h.width, h.height, 3, max_pixels, path, "BMP");
  RleIndexDecoder decoder(bytes, h, path);
  decoder.Run();
  const std::array<uint8_t, 768> palette = ReadPalette(bytes, h);
  // 4. Indices to pixels, the first stored row at the bottom unless top-down.
  const std::vector<uint8_t>& indices = decoder.indices();
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* src = indices.data() + static_cast<size_t>(y) * image.width;
    uint8_t* dst = image.row(h.top_down ? y : image.height - 1 - y);
    for (int x = 0; x < image.width; ++x, dst += 3) {
      const uint8_t* color = &palette[3 * src[x]];
      dst[0] = color[0];
      dst[1] = color[1];
      dst[2] = color[2];
    }
  }
  if (decoder.repairs() > 0) ReportDecodeWarnings(path, decoder.repairs(), decoder.first_repair());
  return image;
}

}  // namespace imgpipe
