#include "image/opencv_decoder.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "image/byte_order.h"
#include "image/codec_internal.h"
#include "image/image_format.h"
#include "image/image_header.h"
#include "image/opencv_loader.h"
#include "util/error.h"

namespace imgpipe {
namespace {

// How a file's decode departs from a plain cv::imdecode (the header's list).
struct OpenCvFix {
  int bmp16 = 0;  // 555 or 565: a 16-bit BMP's layout; 0: none
};

// The layout of a 16-bit BMP's pixels that OpenCV reads (5-5-5 plain, or bit fields
// 5-6-5 or 5-5-5), else 0.
int Bmp16Layout(std::string_view bytes) {
  if (!HasBytes(bytes, 0, 66) || LoadU32(bytes, 14, false) < 40 || LoadU16(bytes, 28, false) != 16) {
    return 0;
  }
  const uint32_t compression = LoadU32(bytes, 30, false);
  if (compression == 0) return 555;
  if (compression != 3) return 0;
  // BI_BITFIELDS: the red, green and blue masks follow the 40-byte header (or are its
  // next fields, in the larger ones): at 54 either way.
  const uint32_t r = LoadU32(bytes, 54, false), g = LoadU32(bytes, 58, false),
                 b = LoadU32(bytes, 62, false);
  if (r == 0xF800 && g == 0x07E0 && b == 0x001F) return 565;
  if (r == 0x7C00 && g == 0x03E0 && b == 0x001F) return 555;
  return 0;
}

OpenCvFix FixFor(std::string_view bytes, const ImageInfo& info) {
  OpenCvFix fix;
  if (info.format == ImageFormat::kBmp) fix.bmp16 = Bmp16Layout(bytes);
  return fix;
}

// An image decoded by the module, released when this goes.
class DecodedMat {
 public:
  explicit DecodedMat(const OpenCvModule& module) : module_(module) {}
  ~DecodedMat() {
    if (mat_.handle != nullptr) module_.release(&mat_);
  }
  DecodedMat(const DecodedMat&) = delete;
  DecodedMat& operator=(const DecodedMat&) = delete;

  ImgpipeCvImage* get() { return &mat_; }
  const ImgpipeCvImage& operator*() const { return mat_; }
  const ImgpipeCvImage* operator->() const { return &mat_; }

 private:
  const OpenCvModule& module_;
  ImgpipeCvImage mat_{};
};

const uint8_t* RowOf(const ImgpipeCvImage& mat, int y) {
  return mat.data + mat.step * static_cast<size_t>(y);
}

// An image of `mat`'s size with `channels` channels, its pixels allocated.
Image ImageOfSize(const ImgpipeCvImage& mat, int channels) {
  Image image;
  image.width = mat.cols;
  image.height = mat.rows;
  image.channels = channels;
  image.pixels.resize(image.row_bytes() * image.height);
  return image;
}

// Maps OpenCV's widening of a 16-bit BMP's samples (BGR, 8 bits) to Pillow's.
void WidenBmp16AsPillow(const ImgpipeCvImage& bgr, int layout) {
  uint8_t five[256], six[256];
  for (int v = 0; v < 256; ++v) {
    five[v] = static_cast<uint8_t>((v >> 3) * 255 / 31);
    six[v] = static_cast<uint8_t>((v >> 2) * 255 / 63);
  }
  for (int y = 0; y < bgr.rows; ++y) {
    uint8_t* p = bgr.data + bgr.step * static_cast<size_t>(y);
    for (int x = 0; x < bgr.cols; ++x, p += 3) {
      p[0] = five[p[0]];
      p[1] = layout == 565 ? six[p[1]] : five[p[1]];
      p[2] = five[p[2]];
    }
  }
}

// Copies an 8-bit OpenCV image (BGR or gray) into RGB or gray pixels; BGR into gray
// (`channels` 1) by Luma.
Image FromMat(const ImgpipeCvImage& mat, int channels) {
  Image image = ImageOfSize(mat, channels);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* src = RowOf(mat, y);
    uint8_t* dst = image.row(y);
    if (mat.channels == 1) {
      std::memcpy(dst, src, image.row_bytes());
      continue;
    }
    for (int x = 0; x < image.width; ++x, src += 3) {
      if (channels == 1) {
        *dst++ = Luma(src[2], src[1], src[0]);
      } else {
        *dst++ = src[2];
        *dst++ = src[1];
        *dst++ = src[0];
      }
    }
  }
  return image;
}

}  // namespace

Image DecodeWithOpenCv(std::string_view bytes, const std::string& path, const ImageInfo& info,
                       int channels) {
  const std::string name = ImageFormatName(info.format);
  if (bytes.size() > INT_MAX) throw DataError(path, std::nullopt, name + " file over 2 GiB");
  // 1. What OpenCV would decode otherwise than Pillow.
  const OpenCvFix fix = FixFor(bytes, info);
  // 2. Decode, without OpenCV's EXIF rotation (PNG, WebP): imgpipe applies EXIF only to
  //    JPEG.
  const int mode = channels == 1 && fix.bmp16 == 0 ? kImgpipeCvGray : kImgpipeCvColor;
  const OpenCvModule& module = LoadOpenCvModule();
  DecodedMat mat(module);
  char error[512] = "";
  const int result =
      module.imdecode(bytes.data(), bytes.size(), mode, 0, mat.get(), error, sizeof(error));
  if (result == kImgpipeCvFailed) {
    throw DataError(path, std::nullopt, "cannot decode " + name + ": " + error);
  }
  if (result != kImgpipeCvDecoded) {
    throw DataError(path, std::nullopt, "corrupt or truncated " + name + " data");
  }
  const bool bmp16 = fix.bmp16 != 0 && mat->channels == 3;
  const int decoded_channels = bmp16 ? channels : mat->channels;
  if (mat->cols != info.decoded_width() || mat->rows != info.decoded_height() ||
      decoded_channels != channels || mat->depth != kImgpipeCvDepth8U) {
    throw DataError(path, std::nullopt,
                    name + " decoded to " + std::to_string(mat->cols) + "x" +
                        std::to_string(mat->rows) + "x" + std::to_string(mat->channels) +
                        ", but its header says " + std::to_string(info.decoded_width()) + "x" +
                        std::to_string(info.decoded_height()) +
                        (info.orientation >= 5 ? " (oriented)" : ""));
  }
  // 3. Pillow's pixels.
  if (bmp16) WidenBmp16AsPillow(*mat, fix.bmp16);
  return FromMat(*mat, channels);
}

}  // namespace imgpipe
