#include "image/codec.h"

#include <turbojpeg.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>

#include "image/bmp_rle_decoder.h"
#include "image/codec_internal.h"
#include "image/decoder_util.h"
#include "image/format_decoders.h"
#include "image/gif_decoder.h"
#include "image/image_header.h"
#include "image/jpeg_lib.h"
#include "image/jpeg_markers.h"
#include "image/jpeg_region_decoder.h"
#include "image/opencv_decoder.h"
#include "image/orientation.h"
#include "image/webp_anim_decoder.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// A TurboJPEG handle for one call, destroyed with it.
//
// Each TurboJPEG call gets a handle that has seen no other image. A libjpeg object keeps
// the Huffman and quantization tables it has read until it is destroyed, and uses them
// for a later image that does not define its own ("abbreviated datastreams" in
// libjpeg.txt; JPEG, ITU T.81 B.5): this is libjpeg's documented behaviour, not a bug in
// Debian's libjpeg-turbo 2.1.5. A fresh object instead fills a missing Huffman table
// with the standard one, as Pillow and DecodeJpegRegion (a fresh object each call) do.
// Until 2026-12 imgpipe kept one handle per thread and replaced it only after a failed
// call, so an image whose scan uses a table it does not define (such as
// fuzz-regressions/jpeg-region-state/2-ycc420-exif6-19x13.jpg: DC table 0 and AC table 1
// only, but its luma scan uses AC table 0) decoded with the tables of whatever JPEG the
// thread had read before: other pixels after a truncated CMYK file, and "corrupt JPEG
// data" after a good photograph. Valgrind found no uninitialised read; the cause was the
// retained tables. A new handle costs about 4 us, against 1-2 ms for a decode.
class TurboJpegHandle {
 public:
  explicit TurboJpegHandle(bool compress)
      : handle_(compress ? tjInitCompress() : tjInitDecompress()) {
    if (handle_ == nullptr) {
      throw Error(std::string("cannot create a TurboJPEG handle: ") + tjGetErrorStr2(nullptr));
    }
  }
  ~TurboJpegHandle() { tjDestroy(handle_); }
  TurboJpegHandle(const TurboJpegHandle&) = delete;
  TurboJpegHandle& operator=(const TurboJpegHandle&) = delete;

  tjhandle get() const { return handle_; }

 private:
  tjhandle handle_;
};

// The message of the last failure on `handle`, without TurboJPEG's "function(): " prefix.
std::string TurboJpegMessage(tjhandle handle) {
  std::string message = tjGetErrorStr2(handle);
  size_t prefix = message.find("(): ");
  if (message.compare(0, 2, "tj") == 0 && prefix != std::string::npos) {
    message.erase(0, prefix + 4);
  }
  return message;
}

}  // namespace

std::string JpegReason(const std::string& message) {
  auto starts_with = [&](const char* prefix) { return message.rfind(prefix, 0) == 0; };
  unsigned sof = 0;
  if (std::sscanf(message.c_str(), "Unsupported JPEG process: SOF type 0x%x", &sof) == 1) {
    const char* process = "unknown process";
    switch (sof) {
      case 0xC3: process = "lossless"; break;
      case 0xC5: case 0xC6: case 0xC7: process = "hierarchical"; break;
      case 0xCB: process = "lossless arithmetic-coded"; break;
      case 0xCD: case 0xCE: case 0xCF: process = "hierarchical arithmetic-coded"; break;
    }
    return std::string("unsupported JPEG: ") + process + " (SOF" + std::to_string(sof - 0xC0) +
           ")";
  }
  int bits = 0;
  if (std::sscanf(message.c_str(), "Unsupported JPEG data precision %d", &bits) == 1) {
    return "unsupported JPEG: " + std::to_string(bits) + "-bit samples";
  }
  if (starts_with("Premature end of JPEG file")) return "truncated JPEG data (premature end of file)";
  if (starts_with("Corrupt JPEG data: ")) return "corrupt JPEG data: " + message.substr(19);
  if (starts_with("Warning: ")) return message.substr(9);  // "unknown JFIF revision number 2.01"
  if (starts_with("Progressive JPEG image has more than")) {
    return "unsupported JPEG: " + message + " (decompression-bomb guard)";
  }
  return "invalid JPEG: " + message;
}

namespace {

std::string HexSignature(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 4; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%s%02X", i ? " " : "", static_cast<uint8_t>(bytes[i]));
    out += hex;
  }
  return out;
}

// Reads the header of `bytes` with libjpeg, whose warnings there are judged by
// IsFatalJpegWarning: throws DataError naming `path` for a fatal one; the others are
// left for the decode to report.
void CheckJpegHeaderWarnings(std::string_view bytes, const std::string& path) {
  LibjpegDecompressor d;
  if (setjmp(d.errors.jump) != 0) throw DataError(path, std::nullopt, JpegReason(d.errors.message));
  jpeg_mem_src(&d.cinfo, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  jpeg_read_header(&d.cinfo, TRUE);
}

ImageInfo ReadJpegInfo(std::string_view bytes, const std::string& path) {
  TurboJpegHandle decompressor(false);
  tjhandle handle = decompressor.get();
  int width = 0, height = 0, subsampling = -1, colorspace = -1;
  if (tjDecompressHeader3(handle, reinterpret_cast<const unsigned char*>(bytes.data()),
                          bytes.size(), &width, &height, &subsampling, &colorspace) != 0) {
    std::string message = TurboJpegMessage(handle);
    // TurboJPEG 2.1 has no name for some valid samplings (4:1:0, 2x4...) and fails
    // after reading the whole header; libjpeg decodes them. It also fails on any
    // warning, which the header is read again to judge (IsFatalJpegWarning).
    bool unnamed_sampling = message.find("Could not determine subsampling") != std::string::npos;
    bool warning = tjGetErrorCode(handle) == TJERR_WARNING;
    if ((!unnamed_sampling && !warning) || width <= 0 || height <= 0 || colorspace < 0) {
      throw DataError(path, std::nullopt, JpegReason(message));
    }
    if (warning) CheckJpegHeaderWarnings(bytes, path);
  }
  // A stream with tables but no frame before EOI (or the end of the bytes) "succeeds"
  // without setting the outputs.
  if (width <= 0 || height <= 0) {
    throw DataError(path, std::nullopt, "truncated JPEG header (no frame before the end of data)");
  }
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.width = width;
  info.height = height;
  if (colorspace == TJCS_GRAY) {
    info.channels = 1;
    info.colorspace = "Grayscale";
  } else if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    info.channels = 4;
    info.colorspace = "CMYK";
  } else {
    info.channels = 3;
    info.colorspace = "RGB";
  }
  info.orientation = ScanJpegMarkers(bytes).orientation;
  return info;
}

}  // namespace

void CmykToRgbOrGray(const std::vector<uint8_t>& cmyk, bool inverted, Image& out) {
  const size_t n = static_cast<size_t>(out.width) * out.height;
  for (size_t i = 0; i < n; ++i) {
    uint32_t s[4];
    for (int k = 0; k < 4; ++k) s[k] = inverted ? cmyk[4 * i + k] : 255 - cmyk[4 * i + k];
    uint32_t r = (s[0] * s[3] + 127) / 255, g = (s[1] * s[3] + 127) / 255,
             b = (s[2] * s[3] + 127) / 255;
    if (out.channels == 1) {
      out.pixels[i] = Luma(r, g, b);
    } else {
      out.pixels[3 * i] = static_cast<uint8_t>(r);
      out.pixels[3 * i + 1] = static_cast<uint8_t>(g);
      out.pixels[3 * i + 2] = static_cast<uint8_t>(b);
    }
  }
}

namespace {

// The whole image, oriented, through libjpeg's API (DecodeJpegRegion without a window).
Image DecodeJpegWithLibjpeg(std::string_view bytes, const std::string& path, int channels) {
  JpegRegionOptions options;
  options.channels = channels;
  options.max_pixels = UINT64_MAX;  // DecodeImage checked its own limit
  return DecodeJpegRegion(bytes, path, options);
}

Image DecodeJpeg(std::string_view bytes, const std::string& path, const ImageInfo& info,
                 int channels) {
  Image image;
  image.width = info.width;
  image.height = info.height;
  image.channels = channels;
  const bool cmyk = info.channels == 4;
  std::vector<uint8_t> cmyk_pixels;
  unsigned char* target;
  int pixel_format;
  if (cmyk) {  // TurboJPEG converts CMYK to nothing else
    cmyk_pixels.resize(static_cast<size_t>(info.width) * info.height * 4);
    target = cmyk_pixels.data();
    pixel_format = TJPF_CMYK;
  } else {
    image.pixels.resize(static_cast<size_t>(info.width) * info.height * channels);
    target = image.pixels.data();
    pixel_format = channels == 1 ? TJPF_GRAY : TJPF_RGB;
  }
  // TurboJPEG cannot tell one libjpeg warning from another, and libjpeg carries on
  // after each: TJFLAG_STOPONWARNING makes it stop at the first (-1, TJERR_WARNING),
  // and the file is decoded again with libjpeg's own API, which judges each warning
  // (IsFatalJpegWarning) and reports those it accepts: the same pixels, as the region
  // decoder's whole-image decode is DecodeImage's. TJFLAG_LIMITSCANS refuses
  // progressive files with more than 500 scans (a decode-time bomb).
  TurboJpegHandle decompressor(false);
  tjhandle handle = decompressor.get();
  if (tjDecompress2(handle, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
                    target, info.width, 0, info.height, pixel_format,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    if (tjGetErrorCode(handle) == TJERR_WARNING) return DecodeJpegWithLibjpeg(bytes, path, channels);
    std::string message = TurboJpegMessage(handle);
    throw DataError(path, std::nullopt, JpegReason(message));
  }
  if (cmyk) {
    image.pixels.resize(static_cast<size_t>(info.width) * info.height * channels);
    CmykToRgbOrGray(cmyk_pixels, ScanJpegMarkers(bytes).adobe, image);
  }
  return ApplyExifOrientation(std::move(image), info.orientation);
}


}  // namespace

ImageInfo ReadImageInfo(std::string_view bytes, const std::string& path, uint64_t max_pixels) {
  // 1. Tell the format by its signature.
  if (bytes.empty()) throw DataError(path, std::nullopt, "empty file");
  ImageFormat format = DetectImageFormat(bytes);
  if (format == ImageFormat::kUnknown) {
    if (const char* named = UnsupportedImageFormatName(bytes)) {
      throw DataError(path, std::nullopt, std::string("not an image: ") + named + " (unsupported)");
    }
    throw DataError(path, std::nullopt,
                    "not an image (unknown signature " + HexSignature(bytes) + ")");
  }
  // 2. Parse its header.
  ImageInfo info =
      format == ImageFormat::kJpeg ? ReadJpegInfo(bytes, path) : ParseImageHeader(format, bytes, path);
  // 3. Refuse what would take too much memory to decode.
  uint64_t pixels = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
  if (pixels > max_pixels) {
    throw DataError(path, std::nullopt,
                    "image too large: " + std::to_string(info.width) + "x" +
                        std::to_string(info.height) + " pixels exceeds the limit of " +
                        std::to_string(max_pixels));
  }
  return info;
}

ImageInfo ReadJpegImageInfo(std::string_view bytes, const std::string& path,
                            uint64_t max_pixels) {
  ImageInfo info = ReadImageInfo(bytes, path, max_pixels);
  if (info.format != ImageFormat::kJpeg) {
    throw DataError(path, std::nullopt,
                    std::string("not a JPEG (") + ImageFormatName(info.format) + " data)");
  }
  return info;
}

Image DecodeImage(std::string_view bytes, const std::string& path, const DecodeOptions& options) {
  if (options.channels != 1 && options.channels != 3) {
    throw Error("DecodeImage: channels must be 1 or 3, not " + std::to_string(options.channels));
  }
  ImageInfo info = ReadImageInfo(bytes, path, options.max_pixels);
  try {
    if (info.format == ImageFormat::kJpeg) return DecodeJpeg(bytes, path, info, options.channels);
    if (info.format == ImageFormat::kGif) return DecodeGif(bytes, path, info, options.channels, options.max_pixels);
    if (info.format == ImageFormat::kWebp && IsAnimatedWebp(bytes)) {
      return DecodeAnimatedWebp(bytes, path, info, options.channels);
    }
    if (info.format == ImageFormat::kBmp && IsRleBmp(bytes)) {
      return RgbToChannels(DecodeBmpRle(bytes, path, options.max_pixels), options.channels);
    }
    if (HasFormatDecoder(info.format)) {
      return DecodeWithFormatDecoder(info.format, bytes, path, options.channels, options.max_pixels);
    }
    return DecodeWithOpenCv(bytes, path, info, options.channels);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw DataError(path, std::nullopt,
                    "out of memory decoding " + std::to_string(info.width) + "x" +
                        std::to_string(info.height) + " pixels");
  } catch (const std::exception& e) {
    throw DataError(path, std::nullopt, std::string("cannot decode: ") + e.what());
  }
}

std::string EncodeJpeg(const Image& image, int quality) {
  if (image.channels != 1 && image.channels != 3) {
    throw Error("EncodeJpeg: channels must be 1 or 3, not " + std::to_string(image.channels));
  }
  if (image.width < 1 || image.height < 1 ||
      image.pixels.size() != image.row_bytes() * static_cast<size_t>(image.height)) {
    throw Error("EncodeJpeg: " + std::to_string(image.width) + "x" +
                std::to_string(image.height) + "x" + std::to_string(image.channels) +
                " image with " + std::to_string(image.pixels.size()) + " bytes of pixels");
  }
  if (quality < 1 || quality > 100) {
    throw Error("EncodeJpeg: quality must be 1..100, not " + std::to_string(quality));
  }
  TurboJpegHandle compressor(true);
  tjhandle handle = compressor.get();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const bool gray = image.channels == 1;
  if (tjCompress2(handle, image.pixels.data(), image.width, 0, image.height,
                  gray ? TJPF_GRAY : TJPF_RGB, &jpeg, &size, gray ? TJSAMP_GRAY : TJSAMP_420,
                  quality, 0) != 0) {
    std::string message = TurboJpegMessage(handle);
    tjFree(jpeg);
    throw Error("JPEG encoding failed: " + message);
  }
  std::string out(reinterpret_cast<const char*>(jpeg), size);
  tjFree(jpeg);
  return out;
}

}  // namespace imgpipe
