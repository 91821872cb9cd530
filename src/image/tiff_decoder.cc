#include "image/tiff_decoder.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "image/codec_internal.h"
#include "image/decode_warnings.h"
#include "image/decoder_util.h"
#include "image/orientation.h"
#include "image/tiff_library.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// The bytes libtiff reads, through TIFFClientOpen's callbacks; every read and seek is
// bounds-checked.
struct MemoryFile {
  std::string_view bytes;
  uint64_t position = 0;
};

tmsize_t ReadMemory(thandle_t handle, void* buffer, tmsize_t size) {
  auto* file = static_cast<MemoryFile*>(handle);
  if (size < 0 || file->position >= file->bytes.size()) return 0;
  const uint64_t n = std::min<uint64_t>(static_cast<uint64_t>(size),
                                        file->bytes.size() - file->position);
  std::memcpy(buffer, file->bytes.data() + file->position, n);
  file->position += n;
  return static_cast<tmsize_t>(n);
}

tmsize_t WriteMemory(thandle_t, void*, tmsize_t) { return -1; }  // opened read-only

toff_t SeekMemory(thandle_t handle, toff_t offset, int whence) {
  auto* file = static_cast<MemoryFile*>(handle);
  uint64_t base = 0;
  if (whence == SEEK_CUR) base = file->position;
  if (whence == SEEK_END) base = file->bytes.size();
  if (offset > UINT64_MAX - base) return static_cast<toff_t>(-1);
  file->position = base + offset;  // past the end is allowed; reads there return 0
  return file->position;
}

int CloseMemory(thandle_t) { return 0; }
toff_t SizeOfMemory(thandle_t handle) { return static_cast<MemoryFile*>(handle)->bytes.size(); }
int MapNothing(thandle_t, void**, toff_t*) { return 0; }
void UnmapNothing(thandle_t, void*, toff_t) {}

// What libtiff reported while one file was open (its handlers get this, per file: no
// global state, so decodes on many threads do not mix their messages).
struct TiffMessages {
  std::string error;  // the first error
  int warnings = 0;
  std::string first_warning;
};

std::string FormatMessage(const char* module, const char* format, va_list args) {
  char text[512];
  std::vsnprintf(text, sizeof(text), format, args);
  return module != nullptr && *module != '\0' ? std::string(module) + ": " + text : text;
}

int OnTiffError(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* messages = static_cast<TiffMessages*>(user);
  if (messages->error.empty()) messages->error = FormatMessage(module, format, args);
  return 1;  // handled: libtiff's global handler (stderr) is not called
}

// A warning that a tag's values lie beyond the end of the file ("IO error during
// reading of ...; tag ignored") is an error: libtiff would decode other pixels without
// the tag (a palette image as gray), where Pillow refuses the file as truncated.
int OnTiffWarning(TIFF*, void* user, const char* module, const char* format, va_list args) {
  auto* messages = static_cast<TiffMessages*>(user);
  std::string text = FormatMessage(module, format, args);
  if (text.find("IO error") != std::string::npos) {
    if (messages->error.empty()) messages->error = std::move(text);
  } else if (messages->warnings++ == 0) {
    messages->first_warning = std::move(text);
  }
  return 1;
}

// libtiff's largest single allocation (a strip's compressed bytes, a codec's state).
constexpr tmsize_t kMaxTiffAllocation = tmsize_t{1} << 30;

// An open TIFF over `bytes`; Check throws DataError with libtiff's first error.
class TiffFile {
 public:
  TiffFile(std::string_view bytes, const std::string& path) : path_(path) {
    file_.bytes = bytes;
    const TiffLibrary& lib = Tiff();
    std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> options(
        lib.open_options_alloc(), lib.open_options_free);
    if (!options) throw DataError(path, std::nullopt, "out of memory opening TIFF");
    lib.open_options_set_error_handler(options.get(), OnTiffError, &messages_);
    lib.open_options_set_warning_handler(options.get(), OnTiffWarning, &messages_);
    lib.open_options_set_max_single_mem_alloc(options.get(), kMaxTiffAllocation);
    // "r": read; "m": no memory mapping (MapNothing).
    tif_ = lib.client_open(path.c_str(), "rm", &file_, ReadMemory, WriteMemory, SeekMemory,
                           CloseMemory, SizeOfMemory, MapNothing, UnmapNothing, options.get());
    // An error reported while opening fails the open; the handle, if any, is closed
    // here (a constructor that throws runs no destructor).
    if (tif_ != nullptr && !messages_.error.empty()) {
      lib.close(tif_);
      tif_ = nullptr;
    }
    Check(tif_ != nullptr, "invalid TIFF");
  }
  ~TiffFile() {
    if (tif_ != nullptr) Tiff().close(tif_);
  }
  TiffFile(const TiffFile&) = delete;
  TiffFile& operator=(const TiffFile&) = delete;

  TIFF* get() const { return tif_; }
  const std::string& path() const { return path_; }

  // Throws DataError "WHAT: libtiff's first error" when libtiff reported an error or
  // `ok` is false.
  void Check(bool ok, const std::string& what) const {
    if (ok && messages_.error.empty()) return;
    throw DataError(path_, std::nullopt,
                    what + ": " + (messages_.error.empty() ? "libtiff failed" : messages_.error));
  }

  // Counts the warnings libtiff gave (decode_warnings.h), once the decode succeeded.
  void ReportWarnings() const {
    if (messages_.warnings > 0) {
      ReportDecodeWarnings(path_, messages_.warnings, "libtiff: " + messages_.first_warning);
    }
  }

 private:
  std::string path_;
  MemoryFile file_;
  TiffMessages messages_;
  TIFF* tif_ = nullptr;
};

// The tags that decide how IFD0's pixels are laid out and read.
struct TiffLayout {
  uint32_t width = 0, height = 0;
  uint16_t bits = 1, samples = 1, sample_format = SAMPLEFORMAT_UINT;
  uint16_t photometric = PHOTOMETRIC_MINISWHITE, compression = COMPRESSION_NONE;
  uint16_t planar = PLANARCONFIG_CONTIG, orientation = 1;
  bool associated_alpha = false;  // ExtraSamples' first value is 1
  bool tiled = false;

  bool gray() const {
    return photometric == PHOTOMETRIC_MINISWHITE || photometric == PHOTOMETRIC_MINISBLACK;
  }
  // Read through libtiff's RGBA interface (the header's list).
  bool rgba_interface() const {
    return compression == COMPRESSION_OJPEG ||
           (photometric == PHOTOMETRIC_YCBCR &&
            !(compression == COMPRESSION_JPEG && planar == PLANARCONFIG_CONTIG));
  }
  // Samples a pixel needs for its colour: 1 (gray, palette), 3 (RGB, YCbCr), 4 (CMYK).
  int colour_samples() const {
    if (photometric == PHOTOMETRIC_SEPARATED) return 4;
    return photometric == PHOTOMETRIC_RGB || photometric == PHOTOMETRIC_YCBCR ? 3 : 1;
  }
};

uint16_t GetU16(const TiffFile& file, uint32_t tag, uint16_t fallback) {
  uint16_t value = fallback;
  if (Tiff().get_field_defaulted(file.get(), tag, &value) != 1) value = fallback;
  return value;
}

// 1. The tags; 2. what this decoder reads of them (else DataError "unsupported TIFF").
TiffLayout ReadLayout(const TiffFile& file) {
  const TiffLibrary& lib = Tiff();
  TiffLayout t;
  file.Check(lib.get_field(file.get(), TIFFTAG_IMAGEWIDTH, &t.width) == 1 &&
                 lib.get_field(file.get(), TIFFTAG_IMAGELENGTH, &t.height) == 1,
             "invalid TIFF: no ImageWidth or ImageLength");
  t.bits = GetU16(file, TIFFTAG_BITSPERSAMPLE, 1);
  t.samples = GetU16(file, TIFFTAG_SAMPLESPERPIXEL, 1);
  t.sample_format = GetU16(file, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
  t.compression = GetU16(file, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
  t.planar = GetU16(file, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
  t.orientation = GetU16(file, TIFFTAG_ORIENTATION, 1);
  if (t.orientation < 1 || t.orientation > 8) t.orientation = 1;
  uint16_t photometric = PHOTOMETRIC_MINISWHITE;  // Pillow's default where the tag is missing
  if (lib.get_field(file.get(), TIFFTAG_PHOTOMETRIC, &photometric) == 1) t.photometric = photometric;
  uint16_t extra_count = 0;
  uint16_t* extra = nullptr;
  if (lib.get_field(file.get(), TIFFTAG_EXTRASAMPLES, &extra_count, &extra) == 1 &&
      extra_count > 0 && extra != nullptr) {
    t.associated_alpha = extra[0] == EXTRASAMPLE_ASSOCALPHA;
  }
  t.tiled = lib.is_tiled(file.get()) != 0;
  file.Check(true, "invalid TIFF");
  // 2.
  const std::string unsupported = "unsupported TIFF: ";
  const uint16_t p = t.photometric;
  if (p != PHOTOMETRIC_MINISWHITE && p != PHOTOMETRIC_MINISBLACK && p != PHOTOMETRIC_RGB &&
      p != PHOTOMETRIC_PALETTE && p != PHOTOMETRIC_SEPARATED && p != PHOTOMETRIC_YCBCR) {
    throw DataError(file.path(), std::nullopt, unsupported + "photometric " + std::to_string(p));
  }
  if (t.rgba_interface()) return t;  // libtiff's RGBA reader checks the rest
  const bool floats = t.sample_format == SAMPLEFORMAT_IEEEFP;
  if (floats ? (t.bits != 32 && t.bits != 64)
             : (t.bits < 1 || (t.bits > 16 && t.bits != 32) ||
                (t.sample_format != SAMPLEFORMAT_UINT && t.sample_format != SAMPLEFORMAT_INT))) {
    throw DataError(file.path(), std::nullopt,
                    unsupported + std::to_string(t.bits) + "-bit samples of format " +
                        std::to_string(t.sample_format));
  }
  if (t.samples < t.colour_samples() ||
      (p == PHOTOMETRIC_PALETTE && (floats || t.bits > 16))) {
    throw DataError(file.path(), std::nullopt,
                    unsupported + std::to_string(t.samples) + " samples of photometric " +
                        std::to_string(p));
  }
  return t;
}

ImageInfo InfoOf(const TiffLayout& t, const std::string& path) {
  ImageInfo info = MakeHeaderInfo(ImageFormat::kTiff, t.width, t.height,
                                  std::min<int>(t.samples, 4), path);
  info.colorspace = t.gray() ? "Grayscale" : t.photometric == PHOTOMETRIC_SEPARATED ? "CMYK" : "RGB";
  info.orientation = t.orientation;
  return info;
}

// ---- Reading the stored samples ------------------------------------------------------

// The decoded samples of one plane (all samples of a pixel, or one sample each when
// PlanarConfiguration is 2): `height` rows of `row_bytes`, as libtiff gives them.
struct SamplePlane {
  size_t row_bytes = 0;
  std::vector<uint8_t> data;
  const uint8_t* row(uint32_t y) const { return data.data() + row_bytes * y; }
};

// Copies rows [y0, y0 + rows) of a decoded strip or tile (`stride` bytes a row, its
// left edge at byte `x_byte` of the image's row) into `plane`.
void CopyBlock(const std::vector<uint8_t>& block, size_t stride, uint32_t y0, uint32_t rows,
               size_t x_byte, SamplePlane& plane) {
  const size_t n = std::min(stride, plane.row_bytes - x_byte);
  for (uint32_t r = 0; r < rows; ++r) {
    std::memcpy(plane.data.data() + plane.row_bytes * (y0 + r) + x_byte, block.data() + stride * r, n);
  }
}

void ReadStrips(const TiffFile& file, const TiffLayout& t, uint16_t s, SamplePlane& plane) {
  const TiffLibrary& lib = Tiff();
  uint32_t rows_per_strip = t.height;
  lib.get_field_defaulted(file.get(), TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
  rows_per_strip = std::clamp<uint32_t>(rows_per_strip, 1, t.height);
  std::vector<uint8_t> block(plane.row_bytes * rows_per_strip);
  for (uint32_t y = 0; y < t.height; y += rows_per_strip) {
    const uint32_t rows = std::min(rows_per_strip, t.height - y);
    const tmsize_t want = static_cast<tmsize_t>(plane.row_bytes * rows);
    const uint32_t strip = lib.compute_strip(file.get(), y, s);
    const tmsize_t got = lib.read_encoded_strip(file.get(), strip, block.data(), want);
    file.Check(got >= want, "corrupt or truncated TIFF strip " + std::to_string(strip));
    CopyBlock(block, plane.row_bytes, y, rows, 0, plane);
  }
}

void ReadTiles(const TiffFile& file, const TiffLayout& t, uint16_t s, int samples,
               SamplePlane& plane) {
  const TiffLibrary& lib = Tiff();
  uint32_t tile_width = 0, tile_height = 0;
  file.Check(lib.get_field(file.get(), TIFFTAG_TILEWIDTH, &tile_width) == 1 &&
                 lib.get_field(file.get(), TIFFTAG_TILELENGTH, &tile_height) == 1 &&
                 tile_width > 0 && tile_height > 0,
             "invalid TIFF tiles");
  // A tile may be larger than the image, but not without bound (its buffer is allocated).
  const uint64_t image_pixels = uint64_t{t.width} * t.height;
  if (uint64_t{tile_width} * tile_height > std::max<uint64_t>(4 * image_pixels, 1 << 20) ||
      tile_width % 16 != 0) {
    throw DataError(file.path(), std::nullopt,
                    "invalid TIFF tiles of " + std::to_string(tile_width) + "x" +
                        std::to_string(tile_height) + " pixels");
  }
  const size_t stride = (uint64_t{tile_width} * samples * t.bits + 7) / 8;
  std::vector<uint8_t> block(stride * tile_height);
  for (uint32_t y = 0; y < t.height; y += tile_height) {
    for (uint32_t x = 0; x < t.width; x += tile_width) {
      const uint32_t tile = lib.compute_tile(file.get(), x, y, 0, s);
      const tmsize_t got =
          lib.read_encoded_tile(file.get(), tile, block.data(), static_cast<tmsize_t>(block.size()));
      file.Check(got >= static_cast<tmsize_t>(block.size()),
                 "corrupt or truncated TIFF tile " + std::to_string(tile));
      // Tile widths are multiples of 16, so x * samples * bits is a whole number of bytes.
      const size_t x_byte = uint64_t{x} * samples * t.bits / 8;
      CopyBlock(block, stride, y, std::min(tile_height, t.height - y), x_byte, plane);
    }
  }
}

// The decoded samples, one plane per sample when planar, else one.
std::vector<SamplePlane> ReadPlanes(const TiffFile& file, const TiffLayout& t) {
  const bool planar = t.planar == PLANARCONFIG_SEPARATE && t.samples > 1;
  const int per_plane = planar ? 1 : t.samples;
  std::vector<SamplePlane> planes(planar ? t.samples : 1);
  for (size_t s = 0; s < planes.size(); ++s) {
    SamplePlane& plane = planes[s];
    plane.row_bytes = (uint64_t{t.width} * per_plane * t.bits + 7) / 8;
    plane.data.assign(plane.row_bytes * t.height + 8, 0);  // + 8: the bit reader's overrun
    if (t.tiled) {
      ReadTiles(file, t, static_cast<uint16_t>(s), per_plane, plane);
    } else {
      ReadStrips(file, t, static_cast<uint16_t>(s), plane);
    }
  }
  return planes;
}

// ---- Samples to 8 bits (docs/image-formats.md) ----------------------------------------

// Sample `i` of a row of `bits`-bit samples: packed most significant bit first below 16
// bits (12-bit ones too); 16, 32 and 64 bits in host order, as libtiff gives them.
uint64_t RawSample(const uint8_t* row, size_t i, int bits) {
  if (bits == 8) return row[i];
  if (bits == 16) { uint16_t v; std::memcpy(&v, row + 2 * i, 2); return v; }
  if (bits == 32) { uint32_t v; std::memcpy(&v, row + 4 * i, 4); return v; }
  if (bits == 64) { uint64_t v; std::memcpy(&v, row + 8 * i, 8); return v; }
  const size_t bit = i * bits;
  const uint32_t window = uint32_t{row[bit / 8]} << 16 | uint32_t{row[bit / 8 + 1]} << 8 |
                          row[bit / 8 + 2];
  return (window >> (24 - bit % 8 - bits)) & ((1u << bits) - 1);
}

// Pillow's 8-bit value of a float sample (its F -> L conversion): clipped to 0..255 and
// truncated; NaN 0.
uint8_t FloatToByte(double v) {
  if (!(v > 0)) return 0;
  return v >= 255 ? 255 : static_cast<uint8_t>(v);
}

// One stored sample as 8 bits: integers of 1-7 bits scaled to 0..255 (1: 0/255, 2: x85,
// 4: x17) and inverted for MinIsWhite; 8 bits kept (inverted for MinIsWhite); more
// than 8 bits their top 8 (v >> (bits - 8)), signed negatives 0, MinIsWhite not
// inverted (Pillow's modes I;16 and I keep the value); floats FloatToByte.
uint8_t SampleToByte(uint64_t raw, const TiffLayout& t, bool invert) {
  if (t.sample_format == SAMPLEFORMAT_IEEEFP) {
    if (t.bits == 64) { double d; std::memcpy(&d, &raw, 8); return FloatToByte(d); }
    float f; const uint32_t u = static_cast<uint32_t>(raw); std::memcpy(&f, &u, 4);
    return FloatToByte(f);
  }
  if (t.sample_format == SAMPLEFORMAT_INT && (raw >> (t.bits - 1)) & 1) return 0;  // negative
  if (t.bits > 8) return static_cast<uint8_t>(raw >> (t.bits - 8));
  const uint32_t max = (1u << t.bits) - 1;
  const uint8_t v = static_cast<uint8_t>((raw * 255 + max / 2) / max);
  return invert ? 255 - v : v;
}

// ---- Samples to RGB ----------------------------------------------------------------

// Sample `s` of pixel `x` of row `y`.
uint64_t PixelSample(const std::vector<SamplePlane>& planes, const TiffLayout& t, uint32_t y,
                     uint32_t x, int s) {
  if (planes.size() > 1) return RawSample(planes[s].row(y), x, t.bits);
  return RawSample(planes[0].row(y), size_t{x} * t.samples + s, t.bits);
}

// The palette (ColorMap): each entry's high bytes, as Pillow keeps them.
std::vector<uint8_t> ReadPalette(const TiffFile& file, const TiffLayout& t) {
  uint16_t *red = nullptr, *green = nullptr, *blue = nullptr;
  file.Check(Tiff().get_field(file.get(), TIFFTAG_COLORMAP, &red, &green, &blue) == 1 &&
                 red != nullptr && green != nullptr && blue != nullptr,
             "invalid TIFF: palette image without a ColorMap");
  const size_t entries = size_t{1} << t.bits;
  std::vector<uint8_t> palette(3 * entries);
  for (size_t i = 0; i < entries; ++i) {
    palette[3 * i] = red[i] >> 8;
    palette[3 * i + 1] = green[i] >> 8;
    palette[3 * i + 2] = blue[i] >> 8;
  }
  return palette;
}

// Pillow's "RGBa" unpacker: colour premultiplied by alpha divided by it (alpha 0: black).
void UnpremultiplyAsPillow(uint8_t* rgb, uint8_t alpha) {
  for (int c = 0; c < 3; ++c) {
    rgb[c] = alpha == 0 ? 0 : static_cast<uint8_t>(std::min(255, rgb[c] * 255 / alpha));
  }
}

// 1. The planes; 2. each pixel's samples to RGB by its photometric.
Image SamplesToRgb(const TiffFile& file, const TiffLayout& t, Image image) {
  const std::vector<SamplePlane> planes = ReadPlanes(file, t);
  const bool invert = t.photometric == PHOTOMETRIC_MINISWHITE;
  const std::vector<uint8_t> palette =
      t.photometric == PHOTOMETRIC_PALETTE ? ReadPalette(file, t) : std::vector<uint8_t>();
  const bool cmyk = t.photometric == PHOTOMETRIC_SEPARATED;
  std::vector<uint8_t> inks(cmyk ? size_t{4} * t.width * t.height : 0);
  for (uint32_t y = 0; y < t.height; ++y) {
    uint8_t* out = image.row(static_cast<int>(y));
    for (uint32_t x = 0; x < t.width; ++x, out += 3) {
      if (cmyk) {
        for (int s = 0; s < 4; ++s) {
          inks[4 * (size_t{y} * t.width + x) + s] = SampleToByte(PixelSample(planes, t, y, x, s), t, false);
        }
      } else if (!palette.empty()) {
        std::memcpy(out, &palette[3 * PixelSample(planes, t, y, x, 0)], 3);
      } else if (t.gray()) {
        std::memset(out, SampleToByte(PixelSample(planes, t, y, x, 0), t, invert), 3);
      } else {
        for (int s = 0; s < 3; ++s) out[s] = SampleToByte(PixelSample(planes, t, y, x, s), t, false);
        if (t.associated_alpha && t.samples > 3) {
          UnpremultiplyAsPillow(out, SampleToByte(PixelSample(planes, t, y, x, 3), t, false));
        }
      }
    }
  }
  if (cmyk) CmykToRgbOrGray(inks, /*inverted=*/false, image);
  return image;
}

// YCbCr other than JPEG-compressed (the header's list): libtiff's RGBA interface, rows
// top-down as stored (requested orientation = the file's, so it flips nothing: the
// Orientation tag is applied afterwards, as for every layout).
Image RgbaInterfaceToRgb(const TiffFile& file, Image image) {
  const TiffLibrary& lib = Tiff();
  TIFFRGBAImage rgba;
  char message[1024] = "";
  file.Check(lib.rgba_image_begin(&rgba, file.get(), 1, message) == 1,
             std::string("unsupported TIFF: ") + message);
  std::unique_ptr<TIFFRGBAImage, void (*)(TIFFRGBAImage*)> end(&rgba, lib.rgba_image_end);
  rgba.req_orientation = rgba.orientation;
  std::vector<uint32_t> raster(static_cast<size_t>(image.width) * image.height);
  file.Check(lib.rgba_image_get(&rgba, raster.data(), image.width, image.height) == 1,
             "corrupt or truncated TIFF data");
  for (size_t i = 0; i < raster.size(); ++i) {
    image.pixels[3 * i] = static_cast<uint8_t>(TIFFGetR(raster[i]));
    image.pixels[3 * i + 1] = static_cast<uint8_t>(TIFFGetG(raster[i]));
    image.pixels[3 * i + 2] = static_cast<uint8_t>(TIFFGetB(raster[i]));
  }
  return image;
}

}  // namespace

ImageInfo ReadTiffInfo(std::string_view bytes, const std::string& path) {
  const TiffFile file(bytes, path);
  return InfoOf(ReadLayout(file), path);
}

Image DecodeTiff(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  // 1. The directory, and the budget before any pixel is decoded.
  const TiffFile file(bytes, path);
  TiffLayout t = ReadLayout(file);
  Image image = AllocateImage(t.width, t.height, 3, max_pixels, path, "TIFF");
  // 2. The pixels.
  if (t.rgba_interface()) {
    image = RgbaInterfaceToRgb(file, std::move(image));
  } else {
    if (t.photometric == PHOTOMETRIC_YCBCR) {  // JPEG-compressed: libjpeg gives RGB
      file.Check(Tiff().set_field(file.get(), TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB) == 1,
                 "invalid JPEG-compressed TIFF");
      t.photometric = PHOTOMETRIC_RGB;
    }
    image = SamplesToRgb(file, t, std::move(image));
  }
  file.ReportWarnings();
  // 3. Oriented as Pillow loads it.
  return ApplyExifOrientation(std::move(image), t.orientation);
}

}  // namespace imgpipe
