#include "image/decoder_util.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <utility>

#include "image/byte_order.h"
#include "image/codec_internal.h"
#include "util/error.h"
#include "util/logging.h"

namespace imgpipe {

void RequireBytes(std::string_view bytes, uint64_t offset, uint64_t size,
                  const std::string& path, const std::string& what) {
  if (!HasBytes(bytes, offset, size)) {
    throw DataError(path, std::min<uint64_t>(offset, bytes.size()), "truncated " + what);
  }
}

namespace {

void CheckDimensions(int64_t width, int64_t height, const std::string& path,
                     const char* format) {
  if (width < 1 || height < 1 || width > INT_MAX || height > INT_MAX) {
    throw DataError(path, std::nullopt,
                    std::string("invalid ") + format + " dimensions " + std::to_string(width) +
                        "x" + std::to_string(height));
  }
}

}  // namespace

ImageInfo MakeHeaderInfo(ImageFormat format, int64_t width, int64_t height, int channels,
                         const std::string& path) {
  CheckDimensions(width, height, path, ImageFormatName(format));
  ImageInfo info;
  info.format = format;
  info.width = static_cast<int>(width);
  info.height = static_cast<int>(height);
  info.channels = channels;
  info.colorspace = channels <= 2 ? "Grayscale" : "RGB";
  return info;
}

Image AllocateImage(int64_t width, int64_t height, int channels, uint64_t max_pixels,
                    const std::string& path, const char* format) {
  CheckDimensions(width, height, path, format);
  if (static_cast<uint64_t>(width) * static_cast<uint64_t>(height) > max_pixels) {
    throw DataError(path, std::nullopt,
                    "image too large: " + std::to_string(width) + "x" + std::to_string(height) +
                        " pixels exceeds the limit of " + std::to_string(max_pixels));
  }
  Image image;
  image.width = static_cast<int>(width);
  image.height = static_cast<int>(height);
  image.channels = channels;
  image.pixels.assign(image.row_bytes() * image.height, 0);
  return image;
}

Image RgbToChannels(Image rgb, int channels) {
  if (channels == 3) return rgb;
  Image gray;
  gray.width = rgb.width;
  gray.height = rgb.height;
  gray.channels = 1;
  const size_t n = static_cast<size_t>(rgb.width) * rgb.height;
  gray.pixels.resize(n);
  for (size_t i = 0; i < n; ++i) {
    gray.pixels[i] = Luma(rgb.pixels[3 * i], rgb.pixels[3 * i + 1], rgb.pixels[3 * i + 2]);
  }
  return gray;
}

void LogAnimationOnce(ImageFormat format, const char* name, const std::string& path, int frames) {
  static std::atomic<bool> logged[static_cast<int>(ImageFormat::kXpm) + 1];
  const int index = static_cast<int>(format);
  if (index < 0 || index > static_cast<int>(ImageFormat::kXpm)) return;
  if (logged[index].exchange(true)) return;
  LogInfo(path + ": animated " + name + "; decoded frame 1" +
          (frames > 0 ? " of " + std::to_string(frames) : "") +
          " (imgpipe reads the first frame of every " + name + "; logged once)");
}

}  // namespace imgpipe
