// What one decode of an input gave, to compare decodes of the same bytes: tests and
// fuzzers use it to check that a decode does not depend on what the thread decoded
// before (fuzz-regressions/jpeg-region-state).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/codec.h"
#include "image/image.h"
#include "image/jpeg_region_decoder.h"
#include "util/error.h"

namespace imgpipe {

// The image a decode returned, or the message of the imgpipe::Error it threw (any other
// exception escapes).
struct DecodeOutcome {
  std::optional<Image> image;
  std::string error;

  bool operator==(const DecodeOutcome& other) const {
    if (image.has_value() != other.image.has_value()) return false;
    if (!image) return error == other.error;
    return image->width == other.image->width && image->height == other.image->height &&
           image->channels == other.image->channels && image->pixels == other.image->pixels;
  }
  // "WxHxC image" or "error: MESSAGE", for test failure messages.
  std::string Describe() const {
    if (!image) return "error: " + error;
    return std::to_string(image->width) + "x" + std::to_string(image->height) + "x" +
           std::to_string(image->channels) + " image";
  }
};

// Runs decode() and returns its outcome.
template <typename Fn>
DecodeOutcome OutcomeOf(Fn&& decode) {
  try {
    return {decode(), ""};
  } catch (const Error& e) {
    return {std::nullopt, e.what()};
  }
}

// A decoder of encoded bytes, named for messages.
struct NamedDecoder {
  std::string name;
  std::function<Image(std::string_view bytes, const std::string& path)> decode;
};

// Every way imgpipe decodes an image file: DecodeImage to RGB and to gray (TurboJPEG,
// OpenCV's codecs and the other formats behind it), and the libjpeg region decoder, whole
// and as a DCT-scaled crop window (which throws Error for what is not a JPEG). Limited to
// `max_pixels` each.
inline std::vector<NamedDecoder> AllImageDecoders(uint64_t max_pixels = kDefaultMaxPixels) {
  auto decode_image = [max_pixels](int channels) {
    return [max_pixels, channels](std::string_view bytes, const std::string& path) {
      DecodeOptions options;
      options.channels = channels;
      options.max_pixels = max_pixels;
      return DecodeImage(bytes, path, options);
    };
  };
  auto decode_region = [max_pixels](bool crop) {
    return [max_pixels, crop](std::string_view bytes, const std::string& path) {
      JpegRegionOptions options;
      options.max_pixels = max_pixels;
      if (crop) {
        ImageInfo info = ReadImageInfo(bytes, path, max_pixels);
        const int width = info.decoded_width(), height = info.decoded_height();
        options.crop = CropWindow{width / 4, height / 3, std::max(1, width / 2),
                                  std::max(1, height / 2)};
        options.min_width = std::max(1, width / 8);
        options.min_height = std::max(1, height / 8);
      }
      return DecodeJpegRegion(bytes, path, options);
    };
  };
  return {{"DecodeImage(rgb)", decode_image(3)},
          {"DecodeImage(gray)", decode_image(1)},
          {"DecodeJpegRegion(whole)", decode_region(false)},
          {"DecodeJpegRegion(scaled crop)", decode_region(true)}};
}

}  // namespace imgpipe
